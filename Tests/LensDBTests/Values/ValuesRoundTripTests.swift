import Foundation
import Testing
@testable import LensDB

/// Encodes with `ValueEncoder` and decodes the bytes back as the same type.
func roundTrip<T: Codable>(_ value: T) throws -> T {
    try ValueDecoder().decode(T.self, from: ValueEncoder().encode(value))
}

struct Address: Codable, Hashable {
    var street: String
    var city: String
    var zip: String?
}

struct Customer: Codable, Equatable {
    var id: Int64
    var name: String
    var address: Address
    var previous: [Address]
    var nickname: String?
    var scores: [Double?]
    var tags: Set<String>
}

enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case rectangle(width: Double, height: Double)
    case labelled(String, Int)
    case empty
}

enum Color: String, Codable, CaseIterable {
    case red, green, blue
}

struct Special: Codable, Equatable {
    var date: Date
    var uuid: UUID
    var data: Data
    var url: URL
    var decimal: Decimal
    var float: Float
}

@Suite struct ValuesRoundTripTests {
    @Test func nestedStructWithOptionalsAndArraysRoundTrips() throws {
        let customer = Customer(
            id: 42, name: "Ada", address: Address(street: "1 Main St", city: "Paris", zip: nil),
            previous: [Address(street: "2 Side St", city: "Lyon", zip: "69001")],
            nickname: nil, scores: [1.5, nil, -3], tags: ["a", "b"]
        )
        #expect(try roundTrip(customer) == customer)
    }

    @Test func enumsWithAndWithoutAssociatedValuesRoundTrip() throws {
        let shapes: [Shape] = [.circle(radius: 2), .rectangle(width: 1, height: 3), .labelled("x", -7), .empty]
        #expect(try roundTrip(shapes) == shapes)
        #expect(try roundTrip(Color.allCases) == Color.allCases)
    }

    @Test func dictionariesWithStringIntAndStructKeysRoundTrip() throws {
        let byName = ["b": 2, "a": 1, "ü": 3, "": 0]
        let byNumber = [10: "ten", -1: "minus one", 0: "zero"]
        let byColor: [Color: Int] = [.red: 1, .blue: 3]
        let byUUID = [UUID(): "one", UUID(): "two"]
        let byAddress = [Address(street: "s", city: "c", zip: nil): true]
        #expect(try roundTrip(byName) == byName)
        #expect(try roundTrip(byNumber) == byNumber)
        #expect(try roundTrip(byColor) == byColor)
        #expect(try roundTrip(byUUID) == byUUID)
        #expect(try roundTrip(byAddress) == byAddress)
    }

    @Test func arraysOfOptionalsKeepTheirNils() throws {
        let values: [Int?] = [nil, 1, nil, nil, 3]
        let nested: [[String?]?] = [nil, ["a", nil], []]
        #expect(try roundTrip(values) == values)
        #expect(try roundTrip(nested) == nested)
    }

    @Test func dateUUIDDataURLDecimalAndFloatRoundTrip() throws {
        let special = Special(
            date: Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7), uuid: UUID(),
            data: Data([0, 1, 2, 255]), url: URL(string: "https://example.com/a?b=c#d")!,
            decimal: Decimal(string: "12345678901234567890.123456789")!, float: 1.1
        )
        #expect(try roundTrip(special) == special)
        #expect(try roundTrip(Data()) == Data())
    }

    @Test func integerExtremesRoundTrip() throws {
        #expect(try roundTrip([Int.min, Int.max, 0, -1, 1]) == [Int.min, Int.max, 0, -1, 1])
        #expect(try roundTrip([UInt64.max, 0, UInt64(Int64.max), UInt64(Int64.max) + 1]) == [UInt64.max, 0, UInt64(Int64.max), UInt64(Int64.max) + 1])
        #expect(try roundTrip([Int8.min, Int8.max]) == [Int8.min, Int8.max])
        #expect(try roundTrip([UInt8.max, 0]) == [UInt8.max, 0])
        #expect(try roundTrip(Int32.min) == Int32.min)
    }

    @Test func specialDoublesKeepTheirBitPatterns() throws {
        let values: [Double] = [.nan, .infinity, -.infinity, -0.0, 0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi]
        let decoded = try roundTrip(values)
        #expect(decoded.map(\.bitPattern) == values.map(\.bitPattern))
        let floats: [Float] = [.nan, -.infinity, -0.0, .greatestFiniteMagnitude]
        #expect(try roundTrip(floats).map(\.bitPattern) == floats.map(\.bitPattern))
    }

    @Test func emptyLongAndNonASCIIStringsRoundTrip() throws {
        let strings = ["", String(repeating: "x", count: 1_000_000), "héllo wörld", "日本語", "👩‍👩‍👧‍👦 family", "\u{0}nul\u{0}"]
        #expect(try roundTrip(strings) == strings)
    }

    @Test func topLevelScalarsAndEmptyContainersRoundTrip() throws {
        #expect(try roundTrip("top") == "top")
        #expect(try roundTrip(true) == true)
        #expect(try roundTrip([Int]()) == [])
        #expect(try roundTrip([String: Int]()) == [:])
        #expect(try roundTrip(Int?.none) == nil)
        #expect(try roundTrip(Optional(5)) == 5)
    }

    @Test func unkeyedContainerHoldingMoreThan127ElementsRoundTrips() throws {
        let big = (0..<1000).map { Address(street: "\($0)", city: "c", zip: nil) }
        #expect(try roundTrip(big) == big)
        let counts = [127, 128, 16_383, 16_384]
        for count in counts {
            let dictionary = Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", $0) })
            #expect(try roundTrip(dictionary) == dictionary)
        }
    }

    /// An open decodes a table's rows with one ``DecodingState``. A value
    /// whose type reads nothing of its map is skipped from the hint its
    /// level holds, if that names the map: one left from the value before,
    /// whose map began at the same offset, would end this one early.
    @Test func valuesDecodedInTurnWithOneStateDecodeAsAlone() throws {
        struct Ignoring: Codable { init(from decoder: any Decoder) throws {} }
        let decoder = ValueDecoder(), state = DecodingState()
        #expect(try decoder.decode([String: Int].self, from: ValueEncoder().encode(["a": 1]), in: state) == ["a": 1])
        _ = try decoder.decode(Ignoring.self, from: ValueEncoder().encode(["a": "a string longer than one byte"]), in: state)
        // The same 20 levels down, past the first 16 levels' hint slots.
        let deep = try ValueEncoder().encode(Nest(depth: 20, leaf: ["a": 1]))
        #expect(try decoder.decode(Nest<[String: Int]>.self, from: deep, in: state).innermost == ["a": 1])
        _ = try decoder.decode(Nest<Ignoring>.self, from: ValueEncoder().encode(Nest(depth: 20, leaf: ["a": "a string longer than one byte"])), in: state)

        let customers = (0..<20).map { number in
            Customer(id: Int64(number), name: String(repeating: "n", count: number % 7), address: Address(street: "\(number) Main St", city: "Paris", zip: number.isMultiple(of: 3) ? nil : "75001"),
                     previous: Array(repeating: Address(street: "Side St", city: "Lyon", zip: nil), count: number % 3),
                     nickname: number.isMultiple(of: 2) ? "x" : nil, scores: [Double(number), nil], tags: number.isMultiple(of: 5) ? [] : ["a"])
        }
        for customer in customers {
            #expect(try decoder.decode(Customer.self, from: ValueEncoder().encode(customer), in: state) == customer)
            // A value that fails part way leaves the state ready for the next.
            #expect(throws: DecodingError.self) { try decoder.decode(Customer.self, from: ValueEncoder().encode(customer.address), in: state) }
        }
    }

    @Test func classHierarchyUsingSuperEncoderRoundTrips() throws {
        let value = Child(base: 1, extra: "x")
        let decoded = try roundTrip(value)
        #expect(decoded.base == 1 && decoded.extra == "x")
    }
}

/// `depth` maps, each under the key `inner` of the one before, the last
/// holding `leaf`.
final class Nest<Leaf: Codable>: Codable {
    let inner: Nest?
    let leaf: Leaf?

    init(depth: Int, leaf: Leaf) {
        inner = depth > 1 ? Nest(depth: depth - 1, leaf: leaf) : nil
        self.leaf = depth > 1 ? nil : leaf
    }

    var innermost: Leaf? { inner?.innermost ?? leaf }
}

class Parent: Codable {
    var base: Int
    init(base: Int) { self.base = base }
}

final class Child: Parent {
    var extra: String
    init(base: Int, extra: String) { self.extra = extra; super.init(base: base) }
    enum Keys: String, CodingKey { case extra }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try super.encode(to: container.superEncoder())
        try container.encode(extra, forKey: .extra)
    }
}

import Foundation
import Testing
@testable import LensDB

struct Inventory: Codable, Equatable {
    var counts: [String: Int]
    var owners: [UUID: String]
}

@Suite struct ValuesDeterminismTests {
    /// Builds the same dictionary two ways so that their iteration orders differ.
    func twoOrders<K: Hashable, V>(_ pairs: [(K, V)]) -> ([K: V], [K: V]) {
        var forward: [K: V] = [:]
        for (key, value) in pairs { forward[key] = value }
        var backward: [K: V] = [:]
        backward.reserveCapacity(pairs.count * 8)
        for (key, value) in pairs.reversed() { backward[key] = value }
        return (forward, backward)
    }

    @Test func dictionaryKeyTypeIsRecognizedWithoutADynamicCast() {
        #expect(dictionaryCodingKeyType != nil)
    }

    @Test func equalStringKeyedDictionariesEncodeToEqualBytes() throws {
        let (a, b) = twoOrders((0..<200).map { ("key\($0)", $0) })
        #expect(Array(a.keys) != Array(b.keys))  // the orders really differ
        #expect(try ValueEncoder().encode(a) == ValueEncoder().encode(b))
    }

    @Test func equalDictionariesWithNonStringKeysEncodeToEqualBytes() throws {
        let uuids = (0..<100).map { _ in UUID() }
        let (a, b) = twoOrders(uuids.enumerated().map { ($1, $0) })
        #expect(try ValueEncoder().encode(a) == ValueEncoder().encode(b))
        let (c, d) = twoOrders((0..<100).map { ($0 * 7919 % 1000, "\($0)") })
        #expect(try ValueEncoder().encode(c) == ValueEncoder().encode(d))
    }

    @Test func equalSetsEncodeToEqualBytes() throws {
        var forward = Set<String>()
        for index in 0..<200 { forward.insert("element\(index)") }
        var backward = Set<String>(minimumCapacity: 2000)
        for index in (0..<200).reversed() { backward.insert("element\(index)") }
        #expect(Array(forward) != Array(backward))  // the orders really differ
        #expect(try ValueEncoder().encode(forward) == ValueEncoder().encode(backward))
        #expect(try roundTrip(forward) == forward)
        let numbers = Set((0..<100).map { $0 * 37 })
        #expect(try ValueEncoder().encode(numbers) == ValueEncoder().encode(Set(numbers.reversed())))
    }

    @Test func dictionariesNestedInStructsEncodeToEqualBytes() throws {
        let (counts1, counts2) = twoOrders((0..<50).map { ("c\($0)", $0) })
        let uuids = (0..<50).map { _ in UUID() }
        let (owners1, owners2) = twoOrders(uuids.map { ($0, $0.uuidString) })
        let first = Inventory(counts: counts1, owners: owners1)
        let second = Inventory(counts: counts2, owners: owners2)
        #expect(try ValueEncoder().encode(first) == ValueEncoder().encode(second))
        #expect(try roundTrip(first) == first)
    }

    @Test func mapKeysAreSortedByTheirUTF8Bytes() throws {
        let document = try Document(decodingBinary: ValueEncoder().encode(["b": 1, "a": 2, "é": 3, "Z": 4]))
        #expect(document.jsonString() == #"{"Z":4,"a":2,"b":1,"é":3}"#)
        let bytes = try ValueEncoder().encode(["b": 1, "a": 2])
        #expect(bytes == [0x09, 0x02, 0x01, 0x61, 0x03, 0x04, 0x01, 0x62, 0x03, 0x02])
    }

    @Test func structFieldsKeepTheirDeclarationOrder() throws {
        let bytes = try ValueEncoder().encode(Address(street: "s", city: "c", zip: "z"))
        let keys = [Array("street".utf8), Array("city".utf8), Array("zip".utf8)]
        let positions = keys.map { key in (0...(bytes.count - key.count)).first { Array(bytes[$0..<($0 + key.count)]) == key }! }
        #expect(positions == positions.sorted())
    }

    @Test func equalDocumentsEncodeToEqualBytes() {
        var first: Document = [:]
        var second: Document = [:]
        for index in 0..<100 { first["k\(index)"] = .int(Int64(index)) }
        for index in (0..<100).reversed() { second["k\(index)"] = .int(Int64(index)) }
        #expect(first == second)
        #expect(first.binaryEncoded() == second.binaryEncoded())
        #expect(first.jsonString() == second.jsonString())
    }
}

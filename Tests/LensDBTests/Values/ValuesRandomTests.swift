import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A recursive Codable tree with every kind of field, for random round trips.
struct Node: Codable, Equatable {
    var name: String
    var number: Int64?
    var unsigned: UInt64
    var ratio: Double
    var flags: [Bool]
    var attributes: [String: Int]
    var when: Date?
    var id: UUID?
    var shape: Shape
    var children: [Node]
}

/// Random values for the tests; every generator is seeded so a failure replays.
struct RandomValues {
    var random: SeededGenerator

    mutating func string() -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "é", "日", "😀", "\u{FEFF}", "\u{10FFFF}"]
        let length = Int.random(in: 0...12, using: &random)
        return String(String.UnicodeScalarView((0..<length).map { _ in pool.randomElement(using: &random)! }))
    }

    mutating func double(allowNaN: Bool) -> Double {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return allowNaN ? .nan : 0
        case 1: return [Double.infinity, -.infinity, -0.0, 0.0].randomElement(using: &random)!
        case 2: return Double(Int.random(in: -1000...1000, using: &random))
        default:
            let value = Double(bitPattern: random.next())
            return value.isNaN ? 1.5 : value
        }
    }

    mutating func int() -> Int64 {
        [Int64.min, Int64.max, 0, -1, Int64.random(in: -200...200, using: &random), Int64(bitPattern: random.next())].randomElement(using: &random)!
    }

    mutating func node(depth: Int) -> Node {
        let shapes: [Shape] = [.circle(radius: 1), .empty, .labelled(string(), Int(int())), .rectangle(width: 2, height: -0.5)]
        let childCount = depth > 3 ? 0 : Int.random(in: 0...3, using: &random)
        return Node(
            name: string(), number: Bool.random(using: &random) ? int() : nil, unsigned: random.next(),
            ratio: double(allowNaN: false), flags: (0..<Int.random(in: 0...3, using: &random)).map { _ in Bool.random(using: &random) },
            attributes: Dictionary((0..<Int.random(in: 0...4, using: &random)).map { _ in (string(), Int(int())) }, uniquingKeysWith: { a, _ in a }),
            when: Bool.random(using: &random) ? Date(timeIntervalSinceReferenceDate: double(allowNaN: false)) : nil,
            id: Bool.random(using: &random) ? UUID() : nil, shape: shapes.randomElement(using: &random)!,
            children: (0..<childCount).map { _ in node(depth: depth + 1) }
        )
    }

    /// A random document; `jsonOnly` keeps to the cases JSON can carry.
    mutating func document(depth: Int, jsonOnly: Bool) -> Document {
        let kinds = depth > 4 ? 7 : 9
        switch Int.random(in: 0..<(jsonOnly ? kinds : kinds + 3), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(int())
        case 3: return .uint(UInt64.random(in: (UInt64(Int64.max) + 1)...UInt64.max, using: &random))
        case 4: return .double(double(allowNaN: true))
        case 5, 6: return .string(string())
        case 7: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in document(depth: depth + 1, jsonOnly: jsonOnly) })
        case 8:
            let pairs = (0..<Int.random(in: 0...4, using: &random)).map { _ in (string(), document(depth: depth + 1, jsonOnly: jsonOnly)) }
            return .object(Dictionary(pairs, uniquingKeysWith: { a, _ in a }))
        case 9: return .bytes(random.bytes(Int.random(in: 0...8, using: &random)))
        case 10: return .date(Date(timeIntervalSinceReferenceDate: double(allowNaN: false)))
        default: return .uuid(UUID())
        }
    }
}

@Suite struct ValuesRandomTests {
    @Test func randomTypedTreesRoundTripEqual() throws {
        var values = RandomValues(random: .fromEnvironment("randomTypedTreesRoundTripEqual"))
        for _ in 0..<300 {
            let node = values.node(depth: 0)
            let bytes = try ValueEncoder().encode(node)
            #expect(try ValueDecoder().decode(Node.self, from: bytes) == node)
            #expect(try DocumentDecoder().decode(Node.self, from: DocumentEncoder().encode(node)) == node)
            // The same value encodes to the same bytes every time.
            #expect(try ValueEncoder().encode(node) == bytes)
        }
    }

    @Test func randomDocumentsRoundTripThroughBinary() throws {
        var values = RandomValues(random: .fromEnvironment("randomDocumentsRoundTripThroughBinary"))
        for _ in 0..<1000 {
            let document = values.document(depth: 0, jsonOnly: false)
            let bytes = document.binaryEncoded()
            // Bytes, not ==: NaN is not equal to itself, but its bytes are.
            #expect(try Document(decodingBinary: bytes).binaryEncoded() == bytes)
            #expect(try ValueEncoder().encode(document) == bytes)
        }
    }

    @Test func randomDocumentsRoundTripThroughJSON() throws {
        var values = RandomValues(random: .fromEnvironment("randomDocumentsRoundTripThroughJSON"))
        for _ in 0..<1000 {
            let document = values.document(depth: 0, jsonOnly: true)
            for pretty in [false, true] {
                let json = document.jsonString(pretty: pretty)
                let parsed = try Document(json: json)
                #expect(parsed.binaryEncoded() == document.binaryEncoded(), "\(json)")
            }
        }
    }

    @Test func randomDocumentsConvertToTheirJSONThroughFoundation() throws {
        var values = RandomValues(random: .fromEnvironment("randomDocumentsConvertToTheirJSONThroughFoundation"))
        func check(_ document: Document) throws {
            // Foundation's JSON has no NaN or infinity, and reads a whole
            // number back as an integer when one holds it (1.0, 9.2e18).
            let document = document.normalizedForFoundation()
            let parsed = try JSONDecoder().decode(Document.self, from: Data(document.jsonString().utf8))
            #expect(parsed.jsonString() == document.jsonString())
        }
        // Whole numbers at the edges of Int64 and UInt64, and past them.
        for edge in [9.24876501583577e18, -9.2e18, 0x1p63, -0x1p63, 1.8e19, 0x1p64, 1e20] { try check(.double(edge)) }
        for _ in 0..<200 { try check(values.document(depth: 0, jsonOnly: true)) }
    }
}

extension Document {
    func normalizedForFoundation() -> Document {
        switch self {
        case let .double(value) where !value.isFinite: return .double(1.5)
        case let .double(value) where value == value.rounded() && value >= -0x1p63 && value < 0x1p63: return .int(Int64(value))
        case let .double(value) where value == value.rounded() && value >= 0 && value < 0x1p64: return .uint(UInt64(value))
        case let .array(elements): return .array(elements.map { $0.normalizedForFoundation() })
        case let .object(entries): return .object(entries.mapValues { $0.normalizedForFoundation() })
        default: return self
        }
    }
}

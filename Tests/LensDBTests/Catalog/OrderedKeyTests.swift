import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// The order-preserving key encoding: byte order must be `<`, for random
/// keys and at the edges, and every key must decode back for display.
@Suite struct OrderedKeyTests {
    func expectSameOrder<T: Comparable & Encodable>(_ values: [T], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for a in values {
            for b in values {
                let (_, x) = try OrderedKey.encode(a), (_, y) = try OrderedKey.encode(b)
                #expect(x.lexicographicallyPrecedes(y) == (a < b), "\(a) vs \(b)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func byteOrderIsNumericOrderForIntegers() throws {
        var random = SeededGenerator.fromEnvironment("orderedIntegers")
        let edges: [Int64] = [.min, .min + 1, -256, -1, 0, 1, 255, 256, .max - 1, .max]
        try expectSameOrder(edges + (0..<60).map { _ in Int64.random(in: .min ... .max, using: &random) })
        try expectSameOrder([Int.min, -1, 0, 1, Int.max] + (0..<40).map { _ in Int.random(in: -1000...1000, using: &random) })
        try expectSameOrder([UInt64.min, 1, 255, 256, UInt64(Int64.max), UInt64(Int64.max) + 1, .max]
                            + (0..<60).map { _ in UInt64.random(in: .min ... .max, using: &random) })
    }

    /// Swift's `<` on strings is not a strict order when one side is not in
    /// NFC: `"e\u{301}" < "éa"` and `"éa" < "e\u{301}"` are both false, yet
    /// the two differ. So the order LensDB keeps is that of the NFC bytes,
    /// which is `<` exactly for strings in NFC (as nearly all text is), and
    /// canonically equal strings are one key.
    @Test func byteOrderIsTheOrderOfLessThanForStrings() throws {
        var random = SeededGenerator.fromEnvironment("orderedStrings")
        // ASCII, accents precomposed and combining, CJK, emoji, NUL, the empty string.
        let alphabet: [String] = ["a", "b", "A", "Z", " ", "\u{0}", "é", "e\u{301}", "ü", "u\u{308}", "中", "🙂", "ß", "~", "\u{301}"]
        var strings = [""]
        for _ in 0..<120 {
            strings.append((0..<Int.random(in: 1...5, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined())
        }
        try expectSameOrder(strings.map { $0.precomposedStringWithCanonicalMapping })
        for a in strings {
            for b in strings where a == b {
                #expect(try OrderedKey.encode(a).1 == OrderedKey.encode(b).1, "equal strings are one key")
            }
        }
        #expect(try OrderedKey.encode("e\u{301}").1 == OrderedKey.encode("é").1, "canonically equal strings are one key")
    }

    @Test func byteOrderIsTheOrderOfLessThanForUUIDs() throws {
        try expectSameOrder((0..<80).map { _ in UUID() } + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))])
    }

    @Test func keysDecodeForDisplayAndWrongShapesAreProblems() throws {
        let uuid = UUID()
        #expect(OrderedKey.decode(OrderedKey.int64(-42), as: .int64) == .int(-42))
        #expect(OrderedKey.decode(OrderedKey.uint64(.max), as: .uint64) == .uint(.max))
        #expect(OrderedKey.decode(OrderedKey.string("alice"), as: .string) == .string("alice"))
        #expect(OrderedKey.decode(OrderedKey.uuid(uuid), as: .uuid) == .uuid(uuid))
        #expect(OrderedKey.problem(with: [1, 2, 3], as: .int64) != nil)
        #expect(OrderedKey.problem(with: [0xFF], as: .string) != nil)
        #expect(OrderedKey.problem(with: Array(repeating: 0, count: 15), as: .uuid) != nil)
        #expect(OrderedKey.problem(with: [0xEE], as: .valueFormat) != nil)
        #expect(OrderedKey.problem(with: [0xEE], as: .raw) == nil, "raw bytes are never judged")
    }

    @Test func otherIdentifierTypesFallBackToTheValueFormat() throws {
        struct Composite: Codable, Comparable { var a: Int; var b: String
            static func < (x: Self, y: Self) -> Bool { (x.a, x.b) < (y.a, y.b) } }
        let (encoding, bytes) = try OrderedKey.encode(Composite(a: 1, b: "x"))
        #expect(encoding == .valueFormat)
        #expect(try ValueDecoder().decode(Composite.self, from: bytes) == Composite(a: 1, b: "x"))
        #expect(OrderedKey.encoding(of: Composite.self) == .valueFormat)
        #expect(OrderedKey.encoding(of: Int.self) == .int64)
        #expect(OrderedKey.encoding(of: UUID.self) == .uuid)
    }
}

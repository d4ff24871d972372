import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A value's order prefix must agree with the values' own order: sorting
/// compares prefixes first and the values only on a tie.
@Suite struct IndexValueOrderTests {
    static func randomValue(_ random: inout SeededGenerator) -> IndexValue {
        let strings = ["", "a", "ab", "abcdefg", "abcdefgh", "abcdefgz", "é", "z", "Zoë", "City 12", "City 120"]
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int([Int64.min, -1, 0, 1, 42, 1 << 53, (1 << 53) + 1, Int64.max].randomElement(using: &random)!)
        case 3: return UInt64([UInt64(Int64.max) + 1, UInt64.max].randomElement(using: &random)!).indexValue
        case 4: return .double([-Double.infinity, -1.5, -0.0, 0.0, 0.25, 1e300, .infinity, .nan].randomElement(using: &random)!)
        case 5: return .normalized(strings.randomElement(using: &random)!)
        case 6: return .uuid(UUID(uuid: (UInt8.random(in: 0...2, using: &random), 0, 0, 0, 0, 0, 0, UInt8.random(in: 0...2, using: &random), 0, 0, 0, 0, 0, 0, 0, UInt8.random(in: 0...2, using: &random))))
        case 7: return .date(Date(timeIntervalSinceReferenceDate: [-1, 0, 1, 1e9].randomElement(using: &random)!))
        default: return .bytes((0..<Int.random(in: 0...9, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) })
        }
    }

    /// A value from a range wide enough that its prefix may differ from
    /// another's in any byte.
    static func wideValue(_ random: inout SeededGenerator) -> IndexValue {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .int(Int64.random(in: .min ... .max, using: &random))
        case 1: return .double(Double.random(in: -1e9...1e9, using: &random))
        default: return .normalized(String((0..<Int.random(in: 0...9, using: &random)).map { _ in "abcé".randomElement(using: &random)! }))
        }
    }

    @Test func aPrefixNeverOrdersTwoValuesAgainstTheirOwnOrder() {
        var random = SeededGenerator.fromEnvironment("indexValueOrder")
        for _ in 0..<20_000 {
            let a = Self.randomValue(&random), b = Self.randomValue(&random)
            if a < b { #expect(a.orderPrefix <= b.orderPrefix && a.leadingOrderBits <= b.leadingOrderBits, "\(a) < \(b)") }
            if b < a { #expect(b.orderPrefix <= a.orderPrefix && b.leadingOrderBits <= a.leadingOrderBits, "\(b) < \(a)") }
            if a == b { #expect(a.orderPrefix == b.orderPrefix && a.leadingOrderBits == b.leadingOrderBits, "\(a) == \(b)") }
        }
    }

    /// `==` and the three-way `order` compare values of one kind by their
    /// own type's operators: they must still say exactly what `<` asked
    /// both ways says, or a tree, a group of equal sort values and a
    /// range's bounds would disagree. NaN equals NaN and both zeros are
    /// equal, as `<` has them. A string not in NFC is no value a table
    /// stores, but the public case can be built by hand: it equals its
    /// canonical equivalent, as `<` has it.
    @Test func equalityAndOrderAgreeWithLessThan() {
        var random = SeededGenerator.fromEnvironment("indexValueEqualityAndOrder")
        let forms: [IndexValue] = [
            .double(.nan), .double(-.nan), .double(0.0), .double(-0.0), .int(0), .double(1), .int(1),
            .string("\u{E9}"), .string("e\u{301}"), .string(""), .string("City 12"),
        ]
        func check(_ a: IndexValue, _ b: IndexValue) {
            #expect((a == b) == (!(a < b) && !(b < a)), "\(a) == \(b)")
            #expect(IndexValue.order(a, b) == (a < b ? -1 : (b < a ? 1 : 0)), "order of \(a) and \(b)")
        }
        for a in forms { for b in forms { check(a, b) } }
        for _ in 0..<20_000 { check(Self.randomValue(&random), Self.randomValue(&random)) }
        for _ in 0..<20_000 { check(Self.wideValue(&random), Self.wideValue(&random)) }
    }

    /// Numbers near where `Double` stops holding every integer (2^53), at
    /// `Int64`'s ends (±2^63) and `UInt64`'s (2^64), with halves, zeros,
    /// infinities and NaN, in every form: each pair compares as their
    /// exact values do, worked out as twice the value in an `Int128`. So
    /// the order is total and transitive across forms, as a tree and a
    /// sort need: 2^53 + 1 as an integer is above 2^53 as a double, which
    /// `Double(2^53 + 1)` equals.
    @Test func integersAndDoublesCompareByTheirExactValues() {
        let two53: Int64 = 1 << 53
        var values: [IndexValue] = [Int64.min, Int64.min + 1, -two53 - 1, -two53, -1, 0, 1, 1 << 52, (1 << 52) + 1, two53 - 1, two53, two53 + 1, two53 + 2,
                                    Int64.max - 1, Int64.max].map { .int($0) }
        values += [UInt64(Int64.max) + 1, UInt64(Int64.max) + 2, UInt64.max - 2048, UInt64.max].map { .uint($0) }
        values += [-Double.infinity, -0x1p64, -0x1p63, -Double(two53) - 2, -Double(two53), -1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5,
                   0x1p52 + 0.5, Double(two53), Double(two53) + 2, 0x1p63 - 1024, 0x1p63, 0x1p63 + 2048, 0x1p64 - 2048, 0x1p64,
                   1e300, .infinity, .nan].map { .double($0) }
        /// Twice the exact value; NaN above +infinity above every finite value.
        func exact(_ value: IndexValue) -> Int128 {
            switch value {
            case let .int(x): return Int128(x) * 2
            case let .uint(x): return Int128(x) * 2
            case let .double(x) where x.isNaN: return .max
            case let .double(x) where x.isInfinite: return x < 0 ? .min : .max - 1
            // Past every integer here, below infinity.
            case let .double(x) where x.magnitude > 0x1p100: return x < 0 ? .min + 1 : .max - 2
            case let .double(x): return Int128(x * 2)
            default: fatalError("not a number")
            }
        }
        var wrong: [String] = []
        for a in values {
            for b in values where (a < b, a == b, b < a) != (exact(a) < exact(b), exact(a) == exact(b), exact(b) < exact(a)) {
                wrong.append("\(a) vs \(b): <\(a < b) ==\(a == b) >\(b < a)")
            }
            for b in values where a == b { if a.hashValue != b.hashValue { wrong.append("\(a) == \(b), hashed apart") } }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(20))")
    }

    /// Large integers, as identifiers near 2^62 are, hash apart: through
    /// `Double`, whose steps there are 1,024 wide, a run of them hashed
    /// alike, and every map keyed by them searched the run.
    @Test func largeIntegersHashApart() {
        for base in [Int64(1) << 62, Int64.max - 4096, -(Int64(1) << 62)] {
            let hashes = Set((0..<2048).map { IndexValue.int(base + $0).hashValue })
            #expect(hashes.count > 2040, "\(hashes.count) hashes for 2048 integers from \(base)")
        }
        let hashes = Set((0..<2048).map { IndexValue.uint(UInt64.max - $0).hashValue })
        #expect(hashes.count > 2040, "\(hashes.count) hashes for 2048 integers below UInt64.max")
    }

    /// A string's or bytes' prefix is its first seven bytes, big-endian,
    /// padded with zeros, under the type's rank: read a word at a time from
    /// eight bytes on, one at a time below.
    @Test func aPrefixHoldsTheFirstSevenBytesAtEveryLength() {
        let text = Array("abcdéfghijklmnopqrstuvwxyz".utf8)
        for length in 0...20 {
            let bytes = Array(text.prefix(length))
            let leading = bytes.prefix(7).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } << (8 * UInt64(7 - min(length, 7)))
            let string = String(decoding: bytes, as: UTF8.self)
            // "é" is two bytes: a cut through it is not a string of these bytes.
            if Array(string.utf8) == bytes {
                #expect(IndexValue.string(string).orderPrefix == 3 << 61 | leading << 5, "\(length) bytes of text")
            }
            #expect(IndexValue.bytes(bytes).orderPrefix == 6 << 61 | leading << 5, "\(length) bytes")
        }
    }

    /// Index entries keep their identifier's leading order bits in the
    /// padding after their values: an entry takes the room it took without
    /// them (one value and a row pointer take 32 bytes; each value more, 24).
    @Test func anEntrysIdentifierBitsTakeNoRoom() {
        #expect(MemoryLayout<IndexValue>.size == 17 && MemoryLayout<IndexValue>.stride == 24)
        #expect(MemoryLayout<OneFieldEntry>.stride == 32)
        #expect(MemoryLayout<TwoFieldEntry>.stride == 56)
        #expect(MemoryLayout<ThreeFieldEntry>.stride == 80)
    }

    /// Strings are normalized unless they are ASCII, which is checked a
    /// word at a time: a byte of 0x80 or above at any place of small
    /// (inline) and large strings, in the words and in the tail, is found.
    @Test func asciiIsToldFromTextWithAByteAbove127AtEveryPlace() {
        for length in 0...40 {
            let ascii = String(repeating: "a", count: length)
            #expect(IndexValue.isASCII(ascii), "\(length) ASCII bytes")
            for place in 0..<length {
                var bytes = Array(ascii.utf8)
                bytes[place] = 0x7F
                #expect(IndexValue.isASCII(String(decoding: bytes, as: UTF8.self)), "0x7F at \(place) of \(length)")
                var scalars = Array(ascii.unicodeScalars)
                scalars[place] = "é"
                let text = String(String.UnicodeScalarView(scalars))
                #expect(!IndexValue.isASCII(text), "é at \(place) of \(length)")
            }
            // "e" and a combining acute accent after ASCII: NFC makes them one scalar.
            // (`String`'s own `==` holds the two forms equal: compare scalars.)
            guard case let .string(normalized) = IndexValue.normalized(ascii + "e\u{301}") else { Issue.record("not a string"); continue }
            #expect(Array(normalized.unicodeScalars) == Array((ascii + "\u{E9}").unicodeScalars), "after \(length) ASCII bytes")
        }
    }

    /// The sort that builds an index (by prefixes, then runs of equal
    /// prefixes checked or sorted by key) against a plain sort by key with
    /// ties by position: keys of one to three fields, from pools small
    /// enough that most keys tie, or that prefixes tie and keys do not, or
    /// (a round in three) wide enough that prefixes differ in every byte,
    /// so that a radix sort of many keys passes over each.
    @Test func indexKeysSortAsAPlainSortByKeyThenPosition() {
        var random = SeededGenerator.fromEnvironment("indexKeySort")
        for round in 0..<300 {
            let wide = round % 3 == 0
            let pool = (0..<Int.random(in: 1...(wide ? 1000 : 12), using: &random)).map { _ in
                wide ? Self.wideValue(&random) : Self.randomValue(&random)
            }
            let fields = Int.random(in: 1...3, using: &random)
            let keys = (0..<Int.random(in: 0...600, using: &random)).map { _ -> IndexedKey in
                let values = (0..<fields).map { _ in pool.randomElement(using: &random)! }
                switch fields {
                case 1: return .one(values[0])
                case 2: return .two(values[0], values[1])
                default: return .three(values[0], values[1], values[2])
                }
            }
            let plain = keys.indices.sorted { keys[$0] < keys[$1] || (!(keys[$1] < keys[$0]) && $0 < $1) }
            #expect(sortedPermutation(keys) == plain, "round \(round)")
        }
    }
}

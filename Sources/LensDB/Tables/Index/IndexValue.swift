import Foundation

/// A field's value as indexes and queries order it: one total order across
/// every type an index takes. `nil` sorts first; numbers by value (NaN
/// after every other number); strings as their NFC forms, byte by byte;
/// then UUIDs, dates (one that is not a number after every other), and bytes.
public enum IndexValue: Sendable, Hashable, Comparable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    /// Only for values above `Int64.max`, so each number has one form.
    case uint(UInt64)
    case double(Double)
    /// Always in NFC.
    case string(String)
    case uuid(UUID)
    case date(Date)
    case bytes([UInt8])

    /// A string in NFC; ASCII is NFC already, and most text is ASCII.
    public static func normalized(_ string: String) -> IndexValue {
        .string(isASCII(string) ? string : string.precomposedStringWithCanonicalMapping)
    }

    /// Whether `string` is in NFC, scalar for scalar: `String`'s own `==`
    /// holds canonically equivalent forms equal, so it cannot tell.
    static func isNFC(_ string: String) -> Bool {
        isASCII(string) || string.unicodeScalars.elementsEqual(string.precomposedStringWithCanonicalMapping.unicodeScalars)
    }

    /// Whether every byte of `string`'s UTF-8 is below 0x80, read eight
    /// bytes at a time: index keys ask for every string they hold.
    static func isASCII(_ string: String) -> Bool {
        var string = string
        // A small string is copied to the stack, a native one read in place.
        return string.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return true }
            let raw = UnsafeRawPointer(base)
            var offset = 0, high: UInt64 = 0
            while offset + 8 <= bytes.count {
                high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < bytes.count {
                high |= UInt64(bytes[offset])
                offset += 1
            }
            return high & 0x8080_8080_8080_8080 == 0
        }
    }

    /// Whether this is a NaN (or a date whose interval is one), which
    /// indexes order after every number (or date) and equal to itself,
    /// where the value's own `==` says it equals nothing.
    var isNaN: Bool {
        switch self {
        case let .double(value): value.isNaN
        case let .date(value): value.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }

    /// A 64-bit number whose order agrees with this value's: a smaller
    /// prefix means a smaller value, and equal values have equal prefixes
    /// (equal prefixes decide nothing). The type's rank in the top 3 bits;
    /// then a number's value (as a `Double`, zero unsigned, NaN last) or the
    /// first 7 bytes of a string, UUID or bytes. Sorting compares these
    /// first, as one integer, and the values only on a tie.
    var orderPrefix: UInt64 {
        let rank = UInt64(self.rank) << 61
        switch self {
        case .null: return 0
        case let .bool(value): return rank | (value ? 1 : 0)
        case .int, .uint, .double: return rank | Self.orderBits(number)
        case let .date(value): return rank | Self.orderBits(value.timeIntervalSinceReferenceDate)
        case let .string(value): return rank | Self.leadingBytes(value)
        case let .uuid(value): return rank | withUnsafeBytes(of: value.uuid) { Self.leadingBytes($0) }
        case let .bytes(value): return rank | value.withUnsafeBytes { Self.leadingBytes($0) }
        }
    }

    /// The top 61 bits of a double's order-preserving form: NaN after every
    /// number, and both zeros alike (they are equal as values).
    private static func orderBits(_ value: Double) -> UInt64 {
        if value.isNaN { return (1 << 61) - 1 }
        let bits = (value == 0 ? 0.0 : value).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        return ordered >> 3
    }

    /// The first 7 bytes, big-endian, in the low 61 bits (shorter ones
    /// padded with zeros, which sort first, as a shorter prefix does).
    private static func leadingBytes(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        // The first eight bytes as one word, the first byte highest and
        // zeros past the end; the eighth drops off.
        var word: UInt64 = 0
        if bytes.count >= 8 {
            word = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        } else {
            for (place, byte) in bytes.enumerated() { word |= UInt64(byte) << (56 - 8 * UInt64(place)) }
        }
        return (word >> 8) << 5
    }

    /// A string's ``leadingBytes(_:)``, read from its UTF-8 in place (a
    /// small string's from a copy on the stack), without copying the string.
    private static func leadingBytes(_ string: String) -> UInt64 {
        string.utf8.withContiguousStorageIfAvailable { leadingBytes(UnsafeRawBufferPointer($0)) }
            ?? Array(string.utf8.prefix(8)).withUnsafeBytes { leadingBytes($0) }
    }

    private var rank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .int, .uint, .double: 2
        case .string: 3
        case .uuid: 4
        case .date: 5
        case .bytes: 6
        }
    }

    public static func < (a: IndexValue, b: IndexValue) -> Bool {
        switch (a, b) {
        case let (.bool(x), .bool(y)): return !x && y
        case let (.int(x), .int(y)): return x < y
        case let (.uint(x), .uint(y)): return x < y
        case (.int, .uint): return true
        case (.uint, .int): return false
        case let (.string(x), .string(y)): return x < y
        case let (.uuid(x), .uuid(y)): return x < y
        // Not `Date`'s `<`: it holds for no pair with a date that is not a
        // number, which would then equal every date, and an index, a sort or
        // the check of a stored index order would take unordered dates for ordered.
        case let (.date(x), .date(y)): return numberLess(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case let (.bytes(x), .bytes(y)): return x.lexicographicallyPrecedes(y)
        case let (.double(x), .double(y)): return numberLess(x, y)
        // An integer and a double by their exact values, never through
        // `Double`, which past 2^53 rounds distinct integers to one double:
        // 2^53 + 1 would then tie 2^53 as a double while exceeding 2^53 as
        // an integer, and no index, sort or stored order could hold all three.
        case let (.int(x), .double(y)): return compare(x, y) < 0
        case let (.double(x), .int(y)): return compare(y, x) > 0
        case let (.uint(x), .double(y)): return compare(x, y) < 0
        case let (.double(x), .uint(y)): return compare(y, x) > 0
        default: return a.rank < b.rank
        }
    }

    /// -1, 0 or 1 as `integer` is below, equal to or above `double`, by
    /// their exact values; NaN is above every number.
    private static func compare(_ integer: Int64, _ double: Double) -> Int {
        // 2^63 is exact as a double; every double in [-2^63, 2^63) has an
        // integral part that fits in an `Int64`.
        guard !double.isNaN, double < 0x1p63 else { return -1 }
        guard double >= -0x1p63 else { return 1 }
        let whole = double.rounded(.towardZero)
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return integer < wholeInteger ? -1 : 1 }
        // The integer is the double's integral part: its fraction decides.
        let fraction = double - whole
        return fraction > 0 ? -1 : fraction < 0 ? 1 : 0
    }

    /// The same for an integer above `Int64.max`, as `.uint` holds.
    private static func compare(_ integer: UInt64, _ double: Double) -> Int {
        // Doubles from 2^63 up are whole numbers; 2^64 is exact.
        guard !double.isNaN, double < 0x1p64 else { return -1 }
        guard double >= 0x1p63 else { return 1 }
        let wholeInteger = UInt64(double)
        return integer == wholeInteger ? 0 : integer < wholeInteger ? -1 : 1
    }

    /// -1, 0 or 1 as `a` is below, equal to or above `b`: what `<` asked
    /// both ways says, in one call, with two integers or two numeric
    /// doubles compared once. Two strings are asked `<` both ways, as
    /// before: `==` first would add a comparison to every unequal pair,
    /// the most common in an index of names.
    static func order(_ a: IndexValue, _ b: IndexValue) -> Int {
        switch (a, b) {
        case let (.int(x), .int(y)): return x < y ? -1 : (x == y ? 0 : 1)
        case let (.double(x), .double(y)) where !x.isNaN && !y.isNaN: return x < y ? -1 : (x == y ? 0 : 1)
        case let (.string(x), .string(y)): return x < y ? -1 : (y < x ? 1 : 0)
        default: return a < b ? -1 : (b < a ? 1 : 0)
        }
    }

    /// Equal when neither is below the other. Two integers, two strings or
    /// two doubles are compared once, by their own type's `==`, which says
    /// the same for them (with every NaN alike).
    public static func == (a: IndexValue, b: IndexValue) -> Bool {
        switch (a, b) {
        case let (.int(x), .int(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        // Every NaN alike, and both zeros, as `numberLess` has them.
        case let (.double(x), .double(y)): return x == y || (x.isNaN && y.isNaN)
        default: return !(a < b) && !(b < a)
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case let .bool(x): hasher.combine(x)
        case let .string(x): hasher.combine(x)
        case let .uuid(x): hasher.combine(x)
        case let .date(x):
            // Equal dates hash alike: every NaN, and both zeros.
            let interval = x.timeIntervalSinceReferenceDate
            hasher.combine(interval.isNaN ? Double.nan.bitPattern : (interval == 0 ? 0 : interval).bitPattern)
        case let .bytes(x): hasher.combine(x)
        // Equal numbers hash alike whatever their form: integers, and doubles
        // of whole value, as the integer; other doubles by their bits. Not
        // through `Double`, which hashed a run of up to 2,048 large integers
        // (identifiers near 2^63) alike.
        case let .int(x): hasher.combine(x)
        case let .uint(x): hasher.combine(x)
        case let .double(x):
            if x.isNaN {
                hasher.combine(Double.nan.bitPattern)
            } else if x >= -0x1p63, x < 0x1p63, x.rounded(.towardZero) == x {
                hasher.combine(Int64(x))
            } else if x >= 0x1p63, x < 0x1p64 {
                // Whole, as every double from 2^52 up is.
                hasher.combine(UInt64(x))
            } else {
                hasher.combine(x.bitPattern)
            }
        }
    }

    private var number: Double {
        switch self {
        case let .int(x): Double(x)
        case let .uint(x): Double(x)
        case let .double(x): x
        default: 0
        }
    }

    /// NaN after every number and equal to itself.
    private static func numberLess(_ x: Double, _ y: Double) -> Bool {
        if x.isNaN { return false }
        if y.isNaN { return true }
        return x < y
    }

    public var description: String {
        switch self {
        case .null: "nil"
        case let .bool(x): "\(x)"
        case let .int(x): "\(x)"
        case let .uint(x): "\(x)"
        case let .double(x): "\(x)"
        case let .string(x): "\"\(x)\""
        case let .uuid(x): x.uuidString
        case let .date(x): "\(x)"
        case let .bytes(x): "0x" + x.map { String(format: "%02x", $0) }.joined()
        }
    }
}

/// A field type indexes can take: its values map to ``IndexValue`` in an
/// order-preserving way. The standard scalar types, `Date`, `UUID`,
/// optionals of these, and `RawRepresentable` types whose raw value is one
/// (declare the conformance: `extension Status: IndexableValue {}`).
///
/// Integers (`.int`, `.uint`) and doubles compare by their exact values,
/// whatever their forms: 2^53 + 1 as an integer is above 2^53 as a double,
/// though `Double(2^53 + 1)` rounds to it.
///
/// An index compares values by their ``IndexValue``s alone. Two values of
/// your type that give one index value (or an integer and a double of one
/// number) are one key: a filter the index answers (`==`, `in`) finds
/// both by either, where a scan compares them with the type's own `==`.
public protocol IndexableValue: Sendable {
    var indexValue: IndexValue { get }
}

extension Int: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension Int8: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension Int16: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension Int32: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension Int64: IndexableValue { public var indexValue: IndexValue { .int(self) } }
extension UInt8: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension UInt16: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension UInt32: IndexableValue { public var indexValue: IndexValue { .int(Int64(self)) } }
extension UInt: IndexableValue { public var indexValue: IndexValue { UInt64(self).indexValue } }
extension UInt64: IndexableValue {
    public var indexValue: IndexValue { self <= UInt64(Int64.max) ? .int(Int64(self)) : .uint(self) }
}
extension Double: IndexableValue { public var indexValue: IndexValue { .double(self) } }
extension Float: IndexableValue { public var indexValue: IndexValue { .double(Double(self)) } }
extension Bool: IndexableValue { public var indexValue: IndexValue { .bool(self) } }
extension String: IndexableValue { public var indexValue: IndexValue { .normalized(self) } }
extension UUID: IndexableValue { public var indexValue: IndexValue { .uuid(self) } }
extension Date: IndexableValue { public var indexValue: IndexValue { .date(self) } }
extension Optional: IndexableValue where Wrapped: IndexableValue {
    public var indexValue: IndexValue { self?.indexValue ?? .null }
}
/// The types whose own `<` is the order of their ``IndexValue``, so an index
/// can serve ranges and orders on them (for other indexable types, such as
/// enums with raw values, an index serves equality only).
@usableFromInline protocol IndexOrderedValue: IndexableValue {}
extension Int: IndexOrderedValue {}
extension Int8: IndexOrderedValue {}
extension Int16: IndexOrderedValue {}
extension Int32: IndexOrderedValue {}
extension Int64: IndexOrderedValue {}
extension UInt8: IndexOrderedValue {}
extension UInt16: IndexOrderedValue {}
extension UInt32: IndexOrderedValue {}
extension UInt: IndexOrderedValue {}
extension UInt64: IndexOrderedValue {}
extension Double: IndexOrderedValue {}
extension Float: IndexOrderedValue {}
extension Bool: IndexOrderedValue {}
extension String: IndexOrderedValue {}
extension UUID: IndexOrderedValue {}
extension Date: IndexOrderedValue {}

extension RawRepresentable where RawValue: IndexableValue, Self: IndexableValue {
    public var indexValue: IndexValue { rawValue.indexValue }
}

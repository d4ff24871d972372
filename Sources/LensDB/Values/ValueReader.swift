import Foundation

/// Why bytes could not be read as the value asked for. Containers turn it into
/// a `DecodingError` that carries the coding path.
enum ReadFailure: Error {
    /// The bytes are not a well-formed value: cut short, an unknown tag, a
    /// length beyond the input, an overlong varint, too deep a nesting.
    case malformed(String, offset: Int)
    /// A well-formed value of another type, or a number out of the type's range.
    case mismatch(String)
    /// `null` where a value was required.
    case null

    func decodingError(_ type: Any.Type, path: [any CodingKey]) -> DecodingError {
        switch self {
        case let .malformed(reason, offset):
            return .dataCorrupted(.init(codingPath: path, debugDescription: "\(reason) at byte \(offset)"))
        case let .mismatch(reason):
            return .typeMismatch(type, .init(codingPath: path, debugDescription: reason))
        case .null:
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "Expected \(type) but found null"))
        }
    }
}

/// Bounds-checked reads from encoded bytes. Every length is checked against
/// the bytes that remain before anything is allocated for it, and nesting is
/// capped at `ValueFormat.maxDepth`, so no input can crash the reader, exhaust
/// its stack, or make it allocate more than the input justifies.
///
/// The pointer is borrowed: a reader lives only inside `withUnsafeBytes`.
struct ValueReader {
    let base: UnsafeRawPointer
    let count: Int

    /// The most elements a reader reserves room for ahead of reading them.
    /// A count is already bounded by the bytes left, but one byte of input can
    /// claim a 24-byte `Document` or a 16-byte `String`; beyond this, storage
    /// grows only as elements actually decode.
    static let maxReservation = 1024

    init(_ buffer: UnsafeRawBufferPointer) {
        // An empty buffer may have no base address; any valid pointer will do,
        // since every read is checked against `count` first.
        base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!
        count = buffer.count
    }

    @inline(__always) func byte(at offset: inout Int) throws(ReadFailure) -> UInt8 {
        guard offset < count else { throw .malformed("Unexpected end of value", offset: offset) }
        let value = base.load(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        return value
    }

    @inline(__always) func tag(at offset: inout Int) throws(ReadFailure) -> ValueTag {
        let raw = try byte(at: &offset)
        // The tags are 0...11 with no gap, so an enum's in-memory value is its
        // raw value; the generated `init(rawValue:)` is an uninlined switch.
        // `tagsAreTheirOwnRawValuesInMemory` checks the assumption.
        guard raw <= ValueTag.uuid.rawValue else { throw .malformed("Unknown tag 0x\(String(raw, radix: 16))", offset: offset - 1) }
        return unsafeBitCast(raw, to: ValueTag.self)
    }

    /// The tag at `offset` without moving past it.
    @inline(__always) func peekTag(at offset: Int) throws(ReadFailure) -> ValueTag {
        var position = offset
        return try tag(at: &position)
    }

    @inline(__always) func varint(at offset: inout Int) throws(ReadFailure) -> UInt64 {
        let first = try byte(at: &offset)
        if first < 0x80 { return UInt64(first) }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while true {
            let byte = try byte(at: &offset)
            // The tenth byte may carry only the 64th bit.
            if shift == 63, byte > 1 { throw .malformed("Varint overflows 64 bits", offset: offset - 1) }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// A byte length or element count that must fit in what remains, each unit
    /// taking at least `unit` bytes.
    @inline(__always) func length(at offset: inout Int, unit: Int = 1) throws(ReadFailure) -> Int {
        let start = offset
        let value = try varint(at: &offset)
        guard value <= UInt64((count - offset) / unit) else {
            throw .malformed("Length \(value) exceeds the \(count - offset) bytes left", offset: start)
        }
        return Int(value)
    }

    @inline(__always) func fixed64(at offset: inout Int) throws(ReadFailure) -> UInt64 {
        guard count - offset >= 8 else { throw .malformed("Unexpected end of value", offset: offset) }
        let value = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        offset += 8
        return UInt64(littleEndian: value)
    }

    /// The UTF-8 bytes of a string or key whose tag was already read.
    @inline(__always) func utf8(at offset: inout Int) throws(ReadFailure) -> UnsafeRawBufferPointer {
        let length = try length(at: &offset)
        let bytes = UnsafeRawBufferPointer(start: base + offset, count: length)
        offset += length
        return bytes
    }

    /// A string whose tag was already read. Invalid UTF-8 is repaired with
    /// U+FFFD rather than rejected, as `String(decoding:as:)` does.
    @inline(__always) func rawString(at offset: inout Int) throws(ReadFailure) -> String {
        String(decoding: try utf8(at: &offset), as: UTF8.self)
    }

    /// Whether the map key at `offset` equals `key`; moves past the key.
    @inline(__always) func keyMatches(at offset: inout Int, _ key: UnsafeBufferPointer<UInt8>) throws(ReadFailure) -> Bool {
        let bytes = try utf8(at: &offset)
        guard bytes.count == key.count else { return false }
        return bytes.count == 0 || memcmp(bytes.baseAddress!, key.baseAddress!, key.count) == 0
    }

    /// Moves past one whole value.
    /// - Complexity: O(*n*) in the value's encoded size.
    func skip(at offset: inout Int, depth: Int) throws(ReadFailure) {
        switch try tag(at: &offset) {
        case .null, .false, .true:
            return
        case .int, .uint:
            _ = try varint(at: &offset)
        case .double, .date:
            _ = try fixed64(at: &offset)
        case .uuid:
            guard count - offset >= 16 else { throw .malformed("Unexpected end of value", offset: offset) }
            offset += 16
        case .string, .bytes:
            offset += try length(at: &offset)
        case .array:
            guard depth < ValueFormat.maxDepth else { throw .malformed("Nesting deeper than \(ValueFormat.maxDepth)", offset: offset) }
            let elements = try length(at: &offset)
            for _ in 0..<elements { try skip(at: &offset, depth: depth + 1) }
        case .map:
            guard depth < ValueFormat.maxDepth else { throw .malformed("Nesting deeper than \(ValueFormat.maxDepth)", offset: offset) }
            let entries = try length(at: &offset, unit: 2)
            for _ in 0..<entries {
                offset += try length(at: &offset)
                try skip(at: &offset, depth: depth + 1)
            }
        }
    }
}

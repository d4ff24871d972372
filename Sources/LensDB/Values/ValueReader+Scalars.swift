import Foundation

/// Typed reads of one scalar value, tag included. A `null` is `.null`; any other
/// type, or a number the type cannot hold exactly, is `.mismatch`.
extension ValueReader {
    @inline(__always) func expect(_ wanted: ValueTag, at offset: inout Int) throws(ReadFailure) {
        let found = try tag(at: &offset)
        guard found == wanted else { throw found == .null ? .null : .mismatch("Expected \(wanted) but found \(found)") }
    }

    @inline(__always) func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: inout Int) throws(ReadFailure) -> T {
        switch try tag(at: &offset) {
        case .int:
            let raw = try varint(at: &offset)
            let value = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            guard let result = T(exactly: value) else { throw .mismatch("\(value) does not fit \(T.self)") }
            return result
        case .uint:
            let value = try varint(at: &offset)
            guard let result = T(exactly: value) else { throw .mismatch("\(value) does not fit \(T.self)") }
            return result
        case .null:
            throw .null
        case let other:
            throw .mismatch("Expected an integer but found \(other)")
        }
    }

    /// A double; integers are accepted too (a JSON `1` for a `Double` field).
    @inline(__always) func double(at offset: inout Int) throws(ReadFailure) -> Double {
        var position = offset
        switch try tag(at: &position) {
        case .double:
            let value = Double(bitPattern: try fixed64(at: &position))
            offset = position
            return value
        case .int:
            return Double(try integer(Int64.self, at: &offset))
        case .uint:
            return Double(try integer(UInt64.self, at: &offset))
        case .null:
            throw .null
        case let other:
            throw .mismatch("Expected a number but found \(other)")
        }
    }

    /// A float narrowed from the stored double; a finite double beyond
    /// `Float`'s range is a mismatch, not infinity.
    func float(at offset: inout Int) throws(ReadFailure) -> Float {
        let value = try double(at: &offset)
        let narrowed = Float(value)
        guard narrowed.isFinite || !value.isFinite else { throw .mismatch("\(value) does not fit Float") }
        return narrowed
    }

    @inline(__always) func bool(at offset: inout Int) throws(ReadFailure) -> Bool {
        switch try tag(at: &offset) {
        case .true: return true
        case .false: return false
        case .null: throw .null
        case let other: throw .mismatch("Expected a bool but found \(other)")
        }
    }

    @inline(__always) func string(at offset: inout Int) throws(ReadFailure) -> String {
        try expect(.string, at: &offset)
        return try rawString(at: &offset)
    }

    /// A date; a double of seconds since 2001 is accepted too, and an ISO 8601
    /// string (what `Document.jsonString` writes for a date).
    @inline(__always) func date(at offset: inout Int) throws(ReadFailure) -> Date {
        var position = offset
        switch try tag(at: &position) {
        case .date:
            offset = position
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64(at: &offset)))
        case .string:
            offset = position
            return try isoDate(try rawString(at: &offset))
        default:
            return Date(timeIntervalSinceReferenceDate: try double(at: &offset))
        }
    }

    private func isoDate(_ text: String) throws(ReadFailure) -> Date {
        for style in [Document.iso8601, Date.ISO8601FormatStyle()] {
            do { return try style.parse(text) } catch { continue }  // the next style may match
        }
        throw .mismatch("\"\(text)\" is not an ISO 8601 date")
    }

    /// A UUID; its canonical string is accepted too (a document parsed from JSON).
    func uuid(at offset: inout Int) throws(ReadFailure) -> UUID {
        switch try tag(at: &offset) {
        case .uuid:
            guard count - offset >= 16 else { throw .malformed("Unexpected end of value", offset: offset) }
            var value = UUID().uuid
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + offset, count: 16)) }
            offset += 16
            return UUID(uuid: value)
        case .string:
            let text = try rawString(at: &offset)
            guard let value = UUID(uuidString: text) else { throw .mismatch("\"\(text)\" is not a UUID") }
            return value
        case .null:
            throw .null
        case let other:
            throw .mismatch("Expected a UUID but found \(other)")
        }
    }

    /// Bytes; a base64 string is accepted too (a document parsed from JSON).
    func bytes(at offset: inout Int) throws(ReadFailure) -> Data {
        switch try tag(at: &offset) {
        case .bytes:
            return Data(try utf8(at: &offset))
        case .string:
            let text = try rawString(at: &offset)
            guard let value = Data(base64Encoded: text) else { throw .mismatch("Expected bytes but found a string that is not base64") }
            return value
        case .null:
            throw .null
        case let other:
            throw .mismatch("Expected bytes but found \(other)")
        }
    }
}

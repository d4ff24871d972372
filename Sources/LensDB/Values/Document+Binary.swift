import Foundation

extension Document {
    /// Decodes a document from LensDB's binary value format: any bytes
    /// ``ValueEncoder`` made, whatever type wrote them.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the bytes are not exactly
    ///   one well-formed value (see ``ValueDecoder`` for the safety promises).
    /// - Complexity: O(*n*) in the size of `bytes`.
    public init(decodingBinary bytes: [UInt8]) throws {
        self = try ValueDecoder().decode(Document.self, from: bytes)
    }

    /// This document in LensDB's binary value format, object keys sorted by
    /// their UTF-8 bytes.
    ///
    /// Integers are written as the canonical `int` tag whenever they fit, so a
    /// typed value and its document encode alike except for key order.
    /// - Complexity: O(*n*) in the encoded size, plus sorting each object's keys.
    public func binaryEncoded() -> [UInt8] {
        let writer = ValueWriter()
        writer.document(self)
        return writer.bytes.array
    }
}

extension ValueWriter {
    /// Appends a document. Nesting deeper than `ValueFormat.maxDepth` sets
    /// `pendingError`, which `ValueEncoder` throws: readers would reject it.
    func document(_ value: Document, depth: Int = 0) {
        switch value {
        case .null: tag(.null)
        case let .bool(flag): bool(flag)
        case let .int(number): int(number)
        case let .uint(number): uint(number)
        case let .double(number): double(number)
        case let .string(text): string(text)
        case let .bytes(data): rawBytes(data)
        case let .date(instant): date(instant)
        case let .uuid(id): uuid(id)
        case let .array(elements):
            tag(.array)
            varint(UInt64(elements.count))
            if depth >= ValueFormat.maxDepth { tooDeep() }
            for element in elements { document(element, depth: depth + 1) }
        case let .object(entries):
            tag(.map)
            varint(UInt64(entries.count))
            if depth >= ValueFormat.maxDepth { tooDeep() }
            for (key, element) in entries.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                rawString(key)
                document(element, depth: depth + 1)
            }
        }
    }
}

extension ValueReader {
    /// Reads one value of any type as a document.
    func document(at offset: inout Int, depth: Int) throws(ReadFailure) -> Document {
        let start = offset
        switch try tag(at: &offset) {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int:
            let raw = try varint(at: &offset)
            return .int(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
        case .uint:
            let raw = try varint(at: &offset)
            return raw <= UInt64(Int64.max) ? .int(Int64(raw)) : .uint(raw)
        case .double: return .double(Double(bitPattern: try fixed64(at: &offset)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64(at: &offset))))
        case .uuid:
            offset = start
            return .uuid(try uuid(at: &offset))
        case .string: return .string(try rawString(at: &offset))
        case .bytes: return .bytes(Array(try utf8(at: &offset)))
        case .array:
            guard depth < ValueFormat.maxDepth else { throw .malformed("Nesting deeper than \(ValueFormat.maxDepth)", offset: start) }
            let count = try length(at: &offset)
            var elements: [Document] = []
            elements.reserveCapacity(Swift.min(count, ValueReader.maxReservation))
            for _ in 0..<count { elements.append(try document(at: &offset, depth: depth + 1)) }
            return .array(elements)
        case .map:
            guard depth < ValueFormat.maxDepth else { throw .malformed("Nesting deeper than \(ValueFormat.maxDepth)", offset: start) }
            let count = try length(at: &offset, unit: 2)
            var entries: [String: Document] = [:]
            entries.reserveCapacity(Swift.min(count, ValueReader.maxReservation))
            for _ in 0..<count {
                let key = try rawString(at: &offset)
                let value = try document(at: &offset, depth: depth + 1)
                // A repeated key (never written by LensDB): the first one wins, as in typed decoding.
                if entries[key] == nil { entries[key] = value }
            }
            return .object(entries)
        }
    }
}

extension ValueWriter {
    func tooDeep() {
        if pendingError == nil {
            pendingError = EncodingError.invalidValue(
                ValueFormat.maxDepth, .init(codingPath: path, debugDescription: "Nesting deeper than \(ValueFormat.maxDepth) levels")
            )
        }
    }
}

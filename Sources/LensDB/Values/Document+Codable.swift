import Foundation

/// A coding key for any string or integer: the keys of a document's objects.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init(intValue: Int) { stringValue = String(intValue); self.intValue = intValue }
}

extension Document: Codable {
    /// Decodes whatever value the decoder holds. ``ValueDecoder`` reads the
    /// binary form directly; other decoders (JSONDecoder) are probed: object,
    /// array, then each scalar type.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the value is none of them.
    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: AnyCodingKey.self) {
            // `try?`: a type mismatch only means "not an object"; the next probe decides.
            var entries: [String: Document] = [:]
            for key in keyed.allKeys { entries[key.stringValue] = try keyed.decode(Document.self, forKey: key) }
            self = .object(entries)
        } else if var unkeyed = try? decoder.unkeyedContainer() {
            // `try?`: as above, "not an array".
            var elements: [Document] = []
            while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(Document.self)) }
            self = .array(elements)
        } else {
            self = try Document(scalarFrom: decoder.singleValueContainer())
        }
    }

    private init(scalarFrom single: any SingleValueDecodingContainer) throws {
        // Each `try?` below is a probe: a mismatch means "try the next type".
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? single.decode(UInt64.self) {
            self = .uint(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Encodes the document through any encoder: objects as keyed containers
    /// (keys sorted), arrays as unkeyed ones, bytes as `Data`, dates as `Date`,
    /// UUIDs as `UUID`.
    ///
    /// - Throws: Whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .array(elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case let .object(entries):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for key in entries.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                try container.encode(entries[key]!, forKey: AnyCodingKey(stringValue: key))
            }
        default:
            try encodeScalar(to: encoder.singleValueContainer())
        }
    }

    private func encodeScalar(to single: any SingleValueEncodingContainer) throws {
        var single = single
        switch self {
        case .null: try single.encodeNil()
        case let .bool(value): try single.encode(value)
        case let .int(value): try single.encode(value)
        case let .uint(value): try single.encode(value)
        case let .double(value): try single.encode(value)
        case let .string(value): try single.encode(value)
        case let .bytes(value): try single.encode(Data(value))
        case let .date(value): try single.encode(value)
        case let .uuid(value): try single.encode(value)
        case .array, .object: preconditionFailure("containers are encoded by encode(to:)")
        }
    }
}

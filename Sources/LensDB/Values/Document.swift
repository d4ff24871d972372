import Foundation

/// A self-describing value: what any stored value is without the program's
/// types. `logtool` shows stored values as JSON through it, and a root
/// document can be read and changed as a `Document` directly.
///
/// Every Codable value converts to a `Document` (``DocumentEncoder``) and back
/// (``DocumentDecoder``); a document converts to LensDB's binary value format
/// (``binaryEncoded()``, ``init(decodingBinary:)``) and to and from JSON
/// (``jsonString(pretty:)``, ``init(json:)-(String)``).
///
/// Objects are unordered: two objects with the same entries are equal, and
/// every encoding of an object (binary or JSON) writes its keys sorted by their
/// UTF-8 bytes, so equal documents have equal bytes.
///
/// ```swift
/// var config: Document = ["protection": ["enabled": true, "retries": 3]]
/// config["protection"]["enabled"] = false
/// print(config.jsonString())   // {"protection":{"enabled":false,"retries":3}}
/// ```
public enum Document: Sendable, Hashable {
    /// No value (`nil`, JSON `null`).
    case null
    /// A boolean.
    case bool(Bool)
    /// An integer that fits `Int64`. Every decoder makes integers `.int` when they fit.
    case int(Int64)
    /// An unsigned integer above `Int64.max`; smaller values are always `.int`.
    case uint(UInt64)
    /// A binary64 floating-point number, `Float` widened.
    case double(Double)
    /// Text.
    case string(String)
    /// Raw bytes (`Data`). JSON shows them as a base64 string.
    case bytes([UInt8])
    /// A point in time. JSON shows it as an ISO 8601 string.
    case date(Date)
    /// A UUID. JSON shows it as its canonical string.
    case uuid(UUID)
    /// An ordered sequence.
    case array([Document])
    /// String keys to values; unordered (see the type's discussion).
    case object([String: Document])
}

extension Document {
    /// The value under `key` of an object; `.null` when this is not an object
    /// or has no such key, so lookups chain: `doc["a"]["b"]`.
    ///
    /// Setting a key of `.null` makes it an object first. Setting `.null` stores
    /// a null value; it does not remove the key (use ``removeValue(forKey:)``).
    /// - Precondition: when setting, `self` is `.object` or `.null`.
    public subscript(key: String) -> Document {
        get {
            if case let .object(entries) = self { return entries[key] ?? .null }
            return .null
        }
        set {
            switch self {
            case var .object(entries):
                self = .null  // drop this reference so the dictionary is mutated in place
                entries[key] = newValue
                self = .object(entries)
            case .null:
                self = .object([key: newValue])
            default:
                preconditionFailure("Document: setting key \"\(key)\" of a value that is not an object")
            }
        }
    }

    /// The element at `index` of an array; `.null` when this is not an array or
    /// `index` is out of range.
    ///
    /// - Precondition: when setting, `self` is `.array` and `index` is in range.
    public subscript(index: Int) -> Document {
        get {
            if case let .array(elements) = self, elements.indices.contains(index) { return elements[index] }
            return .null
        }
        set {
            guard case var .array(elements) = self, elements.indices.contains(index) else {
                preconditionFailure("Document: index \(index) out of range or not an array")
            }
            self = .null  // drop this reference so the array is mutated in place
            elements[index] = newValue
            self = .array(elements)
        }
    }

    /// Removes `key` from an object and returns its value, or nil when absent
    /// or when this is not an object.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> Document? {
        guard case var .object(entries) = self else { return nil }
        self = .null
        let removed = entries.removeValue(forKey: key)
        self = .object(entries)
        return removed
    }

    /// Whether this is `.null`.
    public var isNull: Bool { self == .null }
}

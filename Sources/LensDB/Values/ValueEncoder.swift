import Foundation

/// Encodes any `Encodable` value into LensDB's compact, self-describing binary
/// value format (see the "Value format" article).
///
/// Equal values encode to equal bytes: struct fields keep their encode order
/// (fixed for synthesized conformances), and the entries of every `Dictionary`
/// and the elements of every `Set` are sorted by their bytes, so a store can
/// skip writes that change nothing.
///
/// `ValueEncoder` is a value with no state; it is safe to use from any thread.
///
/// ```swift
/// let bytes = try ValueEncoder().encode(person)
/// let again = try ValueDecoder().decode(Person.self, from: bytes)
/// ```
public struct ValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes `value`.
    ///
    /// - Returns: The encoded bytes; decode them with ``ValueDecoder``.
    /// - Throws: `EncodingError.invalidValue` when the value nests deeper than
    ///   ``ValueFormat/maxDepth``, or when its `encode(to:)` misuses containers
    ///   (writes a nested container after its parent moved on), and any error
    ///   the value's own `encode(to:)` throws.
    /// - Complexity: O(*n*) in the encoded size, plus O(*k* log *k*) for each
    ///   dictionary of *k* entries.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let writer = ValueWriter()
        try writer.encodeValue(value, key: nil)
        try writer.finish()
        return writer.bytes.array
    }
}

/// Marks the collections whose Codable order is not deterministic, so that
/// their containers are sorted before they are closed.
protocol UnorderedCollection {
    /// Elements a sortable unit spans in an unkeyed container.
    static var sortUnit: Int { get }
}

extension Dictionary: UnorderedCollection {
    /// Non-string keys encode as alternating keys and values.
    static var sortUnit: Int { 2 }
}

extension Set: UnorderedCollection {
    static var sortUnit: Int { 1 }
}

/// The coding key type `Dictionary` uses for its keyed containers (the
/// standard library's internal `_DictionaryCodingKey`), learnt once by
/// encoding a dictionary. Comparing a container's key type with it is a
/// pointer comparison; a dynamic cast of every encoded value to
/// `UnorderedKeyedCollection` cost 7% of encoding time.
let dictionaryCodingKeyType: ObjectIdentifier? = {
    let writer = ValueWriter(capacity: 16)
    writer.recordsKeyType = true
    // Encoding a one-entry dictionary of Int cannot fail; if it somehow did,
    // nil makes every keyed container fall back to the dynamic cast.
    try? writer.encodeValue(["": 0], key: nil)
    return writer.recordedKeyType
}()

extension ValueWriter {
    /// Appends one value. Common types are written directly; everything else
    /// goes through its `encode(to:)`.
    @inline(__always)
    func encodeValue<T: Encodable>(_ value: T, key: (any CodingKey)?) throws {
        if T.self == String.self { return string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return int(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Double.self { return double(unsafeBitCast(value, to: Double.self)) }
        if T.self == Int64.self { return int(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Bool.self { return bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Date.self { return date(unsafeBitCast(value, to: Date.self)) }
        try encodeSpecial(value, key: key)
    }

    private func encodeSpecial<T: Encodable>(_ value: T, key: (any CodingKey)?) throws {
        if T.self == [String].self { return stringArray(unsafeBitCast(value, to: [String].self)) }
        if T.self == UUID.self { return uuid(unsafeBitCast(value, to: UUID.self)) }
        if T.self == Data.self { return rawBytes(unsafeBitCast(value, to: Data.self)) }
        if T.self == Document.self { return document(unsafeBitCast(value, to: Document.self), depth: frames.count) }
        if T.self == URL.self { return string(unsafeBitCast(value, to: URL.self).absoluteString) }
        if T.self == Decimal.self { return string(unsafeBitCast(value, to: Decimal.self).description) }
        if T.self == Float.self { return double(Double(unsafeBitCast(value, to: Float.self))) }
        try encodeComposite(value, key: key)
    }

    private func stringArray(_ value: [String]) {
        tag(.array)
        varint(UInt64(value.count))
        for element in value { string(element) }
    }

    /// Encodes a value through its own `encode(to:)`, then closes every
    /// container it opened.
    private func encodeComposite<T: Encodable>(_ value: T, key: (any CodingKey)?) throws {
        if let key { path.append(key) }
        defer { if key != nil { path.removeLast() } }
        let base = frames.count
        guard base < ValueFormat.maxDepth else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "Nesting deeper than \(ValueFormat.maxDepth) levels"))
        }
        let start = bytes.count
        let encoder = ValueEncoderImpl(writer: self, depth: path.count, frameBase: base, valueType: T.self)
        try value.encode(to: encoder)
        try close(downTo: base)
        // A value that encoded nothing is an empty map, as JSONEncoder makes it `{}`.
        if bytes.count == start { bytes.append(ValueTag.map.rawValue); bytes.append(0) }
    }
}

/// The `Encoder` handed to a value's `encode(to:)`: a view of the shared writer
/// at one depth. Copies are cheap; it allocates nothing itself.
struct ValueEncoderImpl: Encoder {
    let writer: ValueWriter
    let depth: Int
    /// The index the first container of this value gets in `writer.frames`.
    let frameBase: Int
    /// The type being encoded: a `Dictionary`'s containers are sorted.
    let valueType: Any.Type

    var codingPath: [any CodingKey] { Array(writer.path.prefix(depth)) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let sorted: Bool
        if writer.recordsKeyType {
            // Learning the key type: reading `dictionaryCodingKeyType` here would recurse.
            writer.recordedKeyType = ObjectIdentifier(Key.self)
            sorted = false
        } else {
            sorted = dictionaryCodingKeyType.map { ObjectIdentifier(Key.self) == $0 } ?? (valueType is UnorderedCollection.Type)
        }
        let (index, id) = openOrReuse(map: true, sortUnit: sorted ? 1 : 0)
        return KeyedEncodingContainer(KeyedValueEncodingContainer<Key>(writer: writer, index: index, id: id, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (index, id) = openOrReuse(map: false, sortUnit: (valueType as? any UnorderedCollection.Type)?.sortUnit ?? 0)
        return UnkeyedValueEncodingContainer(writer: writer, index: index, id: id, depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueEncodingContainerImpl(writer: writer, depth: depth)
    }

    /// A second request for a container (a subclass calling `super.encode(to:)`)
    /// gets the one already open, as JSONEncoder does.
    private func openOrReuse(map: Bool, sortUnit: Int) -> (Int, Int) {
        if writer.frames.count > frameBase {
            let frame = writer.frames[frameBase]
            if frame.isMap != map, writer.pendingError == nil {
                writer.pendingError = EncodingError.invalidValue(
                    map, .init(codingPath: codingPath, debugDescription: "Asked for a keyed and an unkeyed container for one value")
                )
            }
            return (frameBase, frame.id)
        }
        return writer.open(map: map, sortUnit: sortUnit)
    }
}

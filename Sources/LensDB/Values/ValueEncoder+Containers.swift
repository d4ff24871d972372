import Foundation

/// A map being written. Each entry is appended at once: key bytes, then value.
struct KeyedValueEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: ValueWriter
    let index: Int
    let id: Int
    let depth: Int

    var codingPath: [any CodingKey] { Array(writer.path.prefix(depth)) }

    @inline(__always) private func entry(_ key: Key) throws {
        try writer.enter(index, id: id)
        writer.rawString(key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { try entry(key); writer.tag(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try entry(key); writer.bool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try entry(key); writer.string(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try entry(key); writer.double(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try entry(key); writer.double(Double(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try entry(key); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try entry(key); writer.int(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try entry(key); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try entry(key); writer.uint(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try entry(key)
        try writer.encodeValue(value, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let (nested, nestedID) = openNested(key, map: true)
        return KeyedEncodingContainer(KeyedValueEncodingContainer<NestedKey>(writer: writer, index: nested, id: nestedID, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let (nested, nestedID) = openNested(key, map: false)
        return UnkeyedValueEncodingContainer(writer: writer, index: nested, id: nestedID, depth: depth + 1)
    }

    /// Codable gives no way to throw here; a closed container is reported by
    /// the next write that can throw, which finds `pendingError` set.
    private func openNested(_ key: Key, map: Bool) -> (Int, Int) {
        do {
            try entry(key)
        } catch {
            if writer.pendingError == nil { writer.pendingError = error as? EncodingError }
        }
        return writer.open(map: map, sortUnit: 0)
    }

    mutating func superEncoder() -> any Encoder { deferredEncoder(key: "super") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { deferredEncoder(key: key.stringValue) }

    /// A super encoder may be used after its parent writes more, so it writes
    /// into a writer of its own that is spliced in when the parent closes.
    private func deferredEncoder(key: String) -> any Encoder {
        writer.deferredEncoder(frame: index, id: id, key: key, depth: depth)
    }
}

/// An array being written. Its count is patched when it closes.
struct UnkeyedValueEncodingContainer: UnkeyedEncodingContainer {
    let writer: ValueWriter
    let index: Int
    let id: Int
    let depth: Int

    var codingPath: [any CodingKey] { Array(writer.path.prefix(depth)) }
    var count: Int { index < writer.frames.count && writer.frames[index].id == id ? writer.frames[index].count : 0 }

    mutating func encodeNil() throws { try writer.enter(index, id: id); writer.tag(.null) }
    mutating func encode(_ value: Bool) throws { try writer.enter(index, id: id); writer.bool(value) }
    mutating func encode(_ value: String) throws { try writer.enter(index, id: id); writer.string(value) }
    mutating func encode(_ value: Double) throws { try writer.enter(index, id: id); writer.double(value) }
    mutating func encode(_ value: Float) throws { try writer.enter(index, id: id); writer.double(Double(value)) }
    mutating func encode(_ value: Int) throws { try writer.enter(index, id: id); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try writer.enter(index, id: id); writer.int(value) }
    mutating func encode(_ value: UInt64) throws { try writer.enter(index, id: id); writer.uint(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let position = count
        try writer.enter(index, id: id)
        try writer.encodeValue(value, key: IndexKey(position))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (nested, nestedID) = openNested(map: true)
        return KeyedEncodingContainer(KeyedValueEncodingContainer<NestedKey>(writer: writer, index: nested, id: nestedID, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (nested, nestedID) = openNested(map: false)
        return UnkeyedValueEncodingContainer(writer: writer, index: nested, id: nestedID, depth: depth + 1)
    }

    /// See `KeyedValueEncodingContainer.openNested`: errors surface at the next write.
    private func openNested(map: Bool) -> (Int, Int) {
        do {
            try writer.enter(index, id: id)
        } catch {
            if writer.pendingError == nil { writer.pendingError = error as? EncodingError }
        }
        return writer.open(map: map, sortUnit: 0)
    }

    mutating func superEncoder() -> any Encoder {
        writer.deferredEncoder(frame: index, id: id, key: nil, depth: depth)
    }
}

/// A single value, written directly where the value goes.
///
/// Writing a second value, or a value after a container, would corrupt the
/// output; `check()` turns that misuse into an `EncodingError`.
struct SingleValueEncodingContainerImpl: SingleValueEncodingContainer {
    let writer: ValueWriter
    let depth: Int
    /// The buffer's length when the value began: nothing may have been written since.
    let start: Int

    init(writer: ValueWriter, depth: Int) {
        self.writer = writer
        self.depth = depth
        start = writer.bytes.count
    }

    var codingPath: [any CodingKey] { Array(writer.path.prefix(depth)) }

    @inline(__always) private func check() throws {
        guard writer.bytes.count == start else {
            throw EncodingError.invalidValue(start, .init(codingPath: codingPath, debugDescription: "A single value container was written twice, or after another container"))
        }
    }

    mutating func encodeNil() throws { try check(); writer.tag(.null) }
    mutating func encode(_ value: Bool) throws { try check(); writer.bool(value) }
    mutating func encode(_ value: String) throws { try check(); writer.string(value) }
    mutating func encode(_ value: Double) throws { try check(); writer.double(value) }
    mutating func encode(_ value: Float) throws { try check(); writer.double(Double(value)) }
    mutating func encode(_ value: Int) throws { try check(); writer.int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try check(); writer.int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try check(); writer.int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try check(); writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try check(); writer.int(value) }
    mutating func encode(_ value: UInt) throws { try check(); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try check(); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try check(); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try check(); writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try check(); writer.uint(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try check(); try writer.encodeValue(value, key: nil) }
}

/// The coding key of an array element.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

extension ValueWriter {
    /// An encoder for `superEncoder()`: it writes into its own writer, which
    /// the frame splices in (as one more entry or element) when it closes.
    func deferredEncoder(frame index: Int, id: Int, key: String?, depth: Int) -> any Encoder {
        let child = ValueWriter(capacity: 64)
        child.path = Array(path.prefix(depth))
        if index < frames.count, frames[index].id == id {
            frames[index].count += 1
            frames[index].deferred.append((key, child))
        } else if pendingError == nil {
            pendingError = EncodingError.invalidValue(
                id, .init(codingPath: path, debugDescription: "superEncoder() of a container that is already closed")
            )
        }
        return ValueEncoderImpl(writer: child, depth: depth, frameBase: 0, valueType: Never.self)
    }
}

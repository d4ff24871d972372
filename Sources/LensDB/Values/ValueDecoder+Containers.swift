import Foundation

/// A map in the input. Fields are found by comparing key bytes, first at the
/// entry after the previous match (see `DecodingState.Hint`), then from the start.
///
/// Every field is trivially copyable (the state is unretained, valid only
/// inside the `decode` call, like the input bytes): Codable's container box
/// copies this struct on every call, and a reference here would cost a retain
/// and a release per field.
struct KeyedValueDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let stateRef: Unmanaged<DecodingState>
    let reader: ValueReader
    let hint: UnsafeMutablePointer<DecodingState.Hint>
    /// Offset of the first entry.
    let first: Int
    let count: Int
    let depth: Int
    let level: Int

    init(state: DecodingState, first: Int, count: Int, depth: Int, level: Int) {
        stateRef = .passUnretained(state)
        reader = state.reader
        hint = state.hintSlot(level: level)
        self.first = first
        self.count = count
        self.depth = depth
        self.level = level
        hint.pointee = DecodingState.Hint(map: first, offset: first, index: 0)
    }

    private var state: DecodingState { stateRef.takeUnretainedValue() }

    /// Moves the hint past the value at `start`, whose decode ended at `end`.
    @inline(__always) private func settle(start: Int, end: Int) {
        if hint.pointee.map == first, hint.pointee.atValue, hint.pointee.offset == start {
            hint.pointee.offset = end
            hint.pointee.atValue = false
        }
    }

    var codingPath: [any CodingKey] { Array(state.path.prefix(depth)) }

    var allKeys: [Key] {
        var keys: [Key] = []
        var offset = first
        // A malformed entry ends the list; decoding any value past it throws.
        do throws(ReadFailure) {
            for _ in 0..<count {
                let name = String(decoding: try reader.utf8(at: &offset), as: UTF8.self)
                try reader.skip(at: &offset, depth: level)
                if let key = Key(stringValue: name) { keys.append(key) }
            }
        } catch {}
        return keys
    }

    func contains(_ key: Key) -> Bool {
        // Malformed bytes count as "absent" here; decoding the key then throws
        // the typed error with its offset, which is the one the caller can use.
        (try? find(key)) != nil
    }

    /// The offset of the value stored under `key`, or nil.
    private func find(_ key: Key) throws(ReadFailure) -> Int? { try find(named: key.stringValue) }

    private func find(named keyName: String) throws(ReadFailure) -> Int? {
        var name = keyName
        var failure: ReadFailure?
        let found = name.withUTF8 { utf8 -> Int? in
            // withUTF8 only rethrows untyped errors; the typed one is carried out by hand.
            do throws(ReadFailure) { return try search(utf8) } catch { failure = error; return nil }
        }
        if let failure { throw failure }
        return found
    }

    /// The offset of the value under the key whose UTF-8 is `utf8`: first at
    /// the hint, then from the first entry.
    @inline(__always) private func search(_ utf8: UnsafeBufferPointer<UInt8>) throws(ReadFailure) -> Int? {
        if hint.pointee.map == first {
            if hint.pointee.atValue {
                try reader.skip(at: &hint.pointee.offset, depth: level)
                hint.pointee.atValue = false
            }
            if hint.pointee.index < count {
                var offset = hint.pointee.offset
                if try reader.keyMatches(at: &offset, utf8) {
                    hint.pointee = .init(map: first, offset: offset, index: hint.pointee.index + 1, atValue: true)
                    return offset
                }
            }
        }
        var offset = first
        for index in 0..<count {
            let matches = try reader.keyMatches(at: &offset, utf8)
            if matches {
                hint.pointee = .init(map: first, offset: offset, index: index + 1, atValue: true)
                return offset
            }
            try reader.skip(at: &offset, depth: level)
        }
        return nil
    }

    /// Generic over the key so that the hot path never boxes it in an existential.
    @inline(__always) private func locate<K: CodingKey>(_ key: K, _ type: Any.Type) throws -> Int {
        let found: Int?
        do throws(ReadFailure) { found = try find(named: key.stringValue) } catch { throw error.decodingError(type, path: codingPath + [key]) }
        guard let found else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for key \"\(key.stringValue)\""))
        }
        return found
    }

    @inline(__always) private func read<T>(_ key: Key, _ body: (inout Int) throws(ReadFailure) -> T) throws -> T {
        let start = try locate(key, T.self)
        var offset = start
        do throws(ReadFailure) {
            let value = try body(&offset)
            settle(start: start, end: offset)
            return value
        } catch {
            throw error.decodingError(T.self, path: codingPath + [key])
        }
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try read(key) { (offset) throws(ReadFailure) in try reader.peekTag(at: offset) == .null }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key) { (o) throws(ReadFailure) in try reader.bool(at: &o) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key) { (o) throws(ReadFailure) in try reader.string(at: &o) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key) { (o) throws(ReadFailure) in try reader.double(at: &o) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(key) { (o) throws(ReadFailure) in try reader.float(at: &o) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    @inline(__always) private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try read(key) { (o) throws(ReadFailure) in try reader.integer(T.self, at: &o) }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let start = try locate(key, T.self)
        var offset = start
        let level = level
        let value = try stateRef._withUnsafeGuaranteedRef { try $0.decodeValue(type, at: &offset, key: key, level: level) }
        settle(start: start, end: offset)
        return value
    }

    /// One lookup instead of the default's three (contains, decodeNil, decode).
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let found: Int?
        do throws(ReadFailure) {
            found = try find(key)
            if let found, try reader.peekTag(at: found) == .null { return nil }
        } catch {
            throw error.decodingError(T.self, path: codingPath + [key])
        }
        guard let start = found else { return nil }
        var offset = start
        let level = level
        let value = try stateRef._withUnsafeGuaranteedRef { try $0.decodeValue(type, at: &offset, key: key, level: level) }
        settle(start: start, end: offset)
        return value
    }

    // The scalar `decodeIfPresent` requirements default to three lookups too.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try presentScalar(key) { (o) throws(ReadFailure) in try reader.bool(at: &o) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try presentScalar(key) { (o) throws(ReadFailure) in try reader.string(at: &o) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try presentScalar(key) { (o) throws(ReadFailure) in try reader.double(at: &o) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try presentScalar(key) { (o) throws(ReadFailure) in try reader.integer(Int.self, at: &o) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try presentScalar(key) { (o) throws(ReadFailure) in try reader.integer(Int64.self, at: &o) } }

    /// A scalar under `key`, or nil when the key is absent or holds null.
    @inline(__always) private func presentScalar<T>(_ key: Key, _ body: (inout Int) throws(ReadFailure) -> T) throws -> T? {
        do throws(ReadFailure) {
            guard let start = try find(key), try reader.peekTag(at: start) != .null else { return nil }
            var offset = start
            let value = try body(&offset)
            settle(start: start, end: offset)
            return value
        } catch {
            throw error.decodingError(T.self, path: codingPath + [key])
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try nestedDecoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try nestedDecoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try nestedDecoder(SuperKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try nestedDecoder(key) }

    /// A decoder for the value under `key`. Its coding path is fixed when it
    /// is made, because the shared path stack moves on.
    private func nestedDecoder<K: CodingKey>(_ key: K) throws -> ValueDecoderImpl {
        let offset = try locate(key, Any.self)
        guard level < ValueFormat.maxDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "Nesting deeper than \(ValueFormat.maxDepth) levels"))
        }
        return ValueDecoderImpl(state: state, offset: offset, depth: depth, level: level + 1)
    }
}

/// The key `superDecoder()` reads, as JSONDecoder names it.
enum SuperKey: String, CodingKey { case `super` }

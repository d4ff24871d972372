import Foundation

/// Decodes values written by ``ValueEncoder``.
///
/// Decoding reads the bytes in place: a keyed container is a position in the
/// input, not a dictionary, and fields are found by comparing key bytes,
/// starting where the previous field ended. Keys the type does not know are
/// skipped; missing optional keys decode as `nil`.
///
/// Untrusted input is safe: a malformed value throws
/// `DecodingError.dataCorrupted` (with the coding path and byte offset), never
/// crashes, and never allocates more than the input's own size justifies.
///
/// `ValueDecoder` is a value with no state; it is safe to use from any thread.
public struct ValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from `bytes`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for malformed bytes or bytes
    ///   left over after the value; `.typeMismatch`, `.valueNotFound` and
    ///   `.keyNotFound` when the bytes do not match the type; and any error the
    ///   type's own `init(from:)` throws.
    /// - Complexity: O(*n*) in the encoded size when fields are read in the
    ///   order they were written (the synthesized case).
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }

    /// Decodes a value of `type` from borrowed bytes; see the `[UInt8]` overload.
    ///
    /// - Throws: As the `[UInt8]` overload.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        try decode(type, from: bytes, in: DecodingState())
    }

    /// Decodes with `state`, begun again for `bytes`: a caller decoding
    /// many values in turn on one thread, as an open decodes a table's
    /// rows, makes one state for all of them instead of one each.
    func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], in state: DecodingState) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0, in: state) }
    }

    /// ``decode(_:from:in:)-([UInt8])`` from bytes lent in place.
    @usableFromInline
    func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, in state: DecodingState) throws -> T {
        state.begin(ValueReader(bytes))
        var offset = 0
        // Containers hold the state unretained; this keeps it alive until they are done.
        let value = try withExtendedLifetime(state) { try state.decodeValue(type, at: &offset, key: nil, level: 0) }
        guard offset == bytes.count else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(bytes.count - offset) bytes left after the value at byte \(offset)"))
        }
        return value
    }
}

/// What all containers of one `decode` call share: the input, the coding path
/// and each nesting level's position hint. It serves one decode at a time,
/// on one thread; ``begin(_:)`` starts the next. A decoder or container
/// that a type keeps past its own `init(from:)` is invalid, as with any
/// decoder: with a state used again, it would read the next value's bytes.
@usableFromInline
final class DecodingState {
    /// Where the next key of the map at one level is expected: fields are
    /// usually read in the order they were written, so a lookup first tries
    /// the entry after the previous one found.
    ///
    /// After a match the hint points at the matched value (`atValue`); the
    /// decode that reads the value moves it to the value's end (`settle`),
    /// so most values are walked once, not twice.
    struct Hint {
        var map: Int
        var offset: Int
        var index: Int
        var atValue = false
    }

    // Not checked for exclusivity at run time, for speed, as in `ValueWriter`:
    // the state serves one `decode` call at a time, the reader changes only
    // between them, and every mutation of the path is a single append or
    // removal.
    @exclusivity(unchecked) private(set) var reader = ValueReader(UnsafeRawBufferPointer(start: nil, count: 0))
    @exclusivity(unchecked) var path: [any CodingKey] = []
    /// Hint slots, 16 levels a chunk. Chunks never move, so a container keeps
    /// a pointer to its level's slot instead of a reference to this object.
    /// The first chunk is allocated up front; deeper ones when first needed.
    private let firstChunk: UnsafeMutablePointer<Hint>
    @exclusivity(unchecked) private var deeperChunks: [UnsafeMutablePointer<Hint>] = []

    /// A state for no input yet: ``begin(_:)`` gives it one.
    init() {
        firstChunk = DecodingState.makeChunk()
    }

    /// Starts a decode of `reader`'s bytes. Every hint is forgotten: one
    /// left from the value decoded before could name a map at the same
    /// offset of these bytes, and end it where that value's ended.
    func begin(_ reader: ValueReader) {
        assert(path.isEmpty, "every decode takes off the coding path's keys it adds")
        self.reader = reader
        Self.clear(firstChunk)
        for chunk in deeperChunks { Self.clear(chunk) }
    }

    deinit {
        // Hint is a trivial type: nothing to deinitialize.
        firstChunk.deallocate()
        for chunk in deeperChunks { chunk.deallocate() }
    }

    private static func makeChunk() -> UnsafeMutablePointer<Hint> {
        let chunk = UnsafeMutablePointer<Hint>.allocate(capacity: 16)
        chunk.initialize(repeating: Hint(map: -1, offset: 0, index: 0), count: 16)
        return chunk
    }

    /// Sets every hint of `chunk` to name no map.
    private static func clear(_ chunk: UnsafeMutablePointer<Hint>) {
        chunk.update(repeating: Hint(map: -1, offset: 0, index: 0), count: 16)
    }

    /// Whether the slot of `level` exists yet.
    func hasHintSlot(level: Int) -> Bool { level >> 4 <= deeperChunks.count }

    /// The hint slot of nesting level `level`.
    @inline(__always) func hintSlot(level: Int) -> UnsafeMutablePointer<Hint> {
        if level < 16 { return firstChunk + level }
        while deeperChunks.count < level >> 4 { deeperChunks.append(DecodingState.makeChunk()) }
        return deeperChunks[(level >> 4) - 1] + (level & 15)
    }

    /// Reads one value at `offset` and moves past it. Common types are read
    /// directly; everything else through its `init(from:)`.
    @inline(__always)
    func decodeValue<T: Decodable>(_ type: T.Type, at offset: inout Int, key: (any CodingKey)?, level: Int) throws -> T {
        do throws(ReadFailure) {
            if T.self == String.self { return unsafeBitCast(try reader.string(at: &offset), to: T.self) }
            if T.self == Int.self { return unsafeBitCast(try reader.integer(Int.self, at: &offset), to: T.self) }
            if T.self == Double.self { return unsafeBitCast(try reader.double(at: &offset), to: T.self) }
            if T.self == Int64.self { return unsafeBitCast(try reader.integer(Int64.self, at: &offset), to: T.self) }
            if T.self == Bool.self { return unsafeBitCast(try reader.bool(at: &offset), to: T.self) }
            if T.self == Date.self { return unsafeBitCast(try reader.date(at: &offset), to: T.self) }
            if T.self == [String].self { return unsafeBitCast(try stringArray(at: &offset, level: level), to: T.self) }
        } catch {
            throw error.decodingError(T.self, path: key.map { path + [$0] } ?? path)
        }
        return try decodeSpecial(type, at: &offset, key: key, level: level)
    }

    private func decodeSpecial<T: Decodable>(_ type: T.Type, at offset: inout Int, key: (any CodingKey)?, level: Int) throws -> T {
        do throws(ReadFailure) {
            if T.self == UUID.self { return unsafeBitCast(try reader.uuid(at: &offset), to: T.self) }
            if T.self == Data.self { return unsafeBitCast(try reader.bytes(at: &offset), to: T.self) }
            if T.self == Document.self { return unsafeBitCast(try reader.document(at: &offset, depth: level), to: T.self) }
            if T.self == Float.self { return unsafeBitCast(try reader.float(at: &offset), to: T.self) }
            if T.self == URL.self {
                let text = try reader.string(at: &offset)
                guard let url = URL(string: text) else { throw ReadFailure.mismatch("\"\(text)\" is not a URL") }
                return unsafeBitCast(url, to: T.self)
            }
            if T.self == Decimal.self {
                let text = try reader.string(at: &offset)
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw ReadFailure.mismatch("\"\(text)\" is not a decimal number") }
                return unsafeBitCast(decimal, to: T.self)
            }
        } catch {
            throw error.decodingError(T.self, path: key.map { path + [$0] } ?? path)
        }
        return try decodeComposite(type, at: &offset, key: key, level: level)
    }

    private func stringArray(at offset: inout Int, level: Int) throws(ReadFailure) -> [String] {
        try reader.expect(.array, at: &offset)
        let count = try reader.length(at: &offset, unit: 2)
        var result: [String] = []
        result.reserveCapacity(Swift.min(count, ValueReader.maxReservation))
        for _ in 0..<count { result.append(try reader.string(at: &offset)) }
        return result
    }

    /// Decodes through `init(from:)`, then moves past the value: the type may
    /// have read only part of it.
    private func decodeComposite<T: Decodable>(_ type: T.Type, at offset: inout Int, key: (any CodingKey)?, level: Int) throws -> T {
        if let key { path.append(key) }
        defer { if key != nil { path.removeLast() } }
        guard level < ValueFormat.maxDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "Nesting deeper than \(ValueFormat.maxDepth) levels"))
        }
        let start = offset
        let value = try T(from: ValueDecoderImpl(state: self, offset: start, depth: path.count, level: level + 1))
        if let end = endOfReadMap(at: start, level: level + 1) {
            offset = end
            return value
        }
        do throws(ReadFailure) {
            try reader.skip(at: &offset, depth: level)
        } catch {
            throw error.decodingError(T.self, path: path)
        }
        return value
    }

    /// The end of the map at `start` when its keyed container read every
    /// entry in order, so its hint already stands past the last one; else nil.
    private func endOfReadMap(at start: Int, level: Int) -> Int? {
        var position = start
        do throws(ReadFailure) {
            guard try reader.tag(at: &position) == .map else { return nil }
            let count = try reader.length(at: &position, unit: 2)
            guard hasHintSlot(level: level) else { return nil }
            let hint = hintSlot(level: level).pointee
            guard hint.map == position, hint.index == count, !hint.atValue else { return nil }
            return hint.offset
        } catch {
            return nil  // malformed: the skip that follows throws the error with its offset
        }
    }
}

/// The `Decoder` handed to a type's `init(from:)`: a position in the input.
struct ValueDecoderImpl: Decoder {
    let stateRef: Unmanaged<DecodingState>
    let offset: Int
    let depth: Int
    let level: Int

    init(state: DecodingState, offset: Int, depth: Int, level: Int) {
        stateRef = .passUnretained(state)
        self.offset = offset
        self.depth = depth
        self.level = level
    }

    var state: DecodingState { stateRef.takeUnretainedValue() }

    var codingPath: [any CodingKey] { Array(state.path.prefix(depth)) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        var position = offset
        do throws(ReadFailure) {
            try state.reader.expect(.map, at: &position)
            let count = try state.reader.length(at: &position, unit: 2)
            return KeyedDecodingContainer(KeyedValueDecodingContainer<Key>(state: state, first: position, count: count, depth: depth, level: level))
        } catch {
            throw error.decodingError([String: Any].self, path: codingPath)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        var position = offset
        do throws(ReadFailure) {
            try state.reader.expect(.array, at: &position)
            let count = try state.reader.length(at: &position)
            return UnkeyedValueDecodingContainer(state: state, offset: position, count: count, depth: depth, level: level)
        } catch {
            throw error.decodingError([Any].self, path: codingPath)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecodingContainerImpl(state: state, offset: offset, depth: depth, level: level)
    }
}

import Foundation

/// An array in the input, read front to back.
struct UnkeyedValueDecodingContainer: UnkeyedDecodingContainer {
    /// Unretained, as in `KeyedValueDecodingContainer`.
    let stateRef: Unmanaged<DecodingState>
    /// Offset of the next element.
    var offset: Int
    let elementCount: Int
    let depth: Int
    let level: Int
    private(set) var currentIndex = 0

    init(state: DecodingState, offset: Int, count: Int, depth: Int, level: Int) {
        stateRef = .passUnretained(state)
        self.offset = offset
        elementCount = count
        self.depth = depth
        self.level = level
    }

    private var state: DecodingState { stateRef.takeUnretainedValue() }
    var codingPath: [any CodingKey] { Array(state.path.prefix(depth)) }
    var count: Int? { elementCount }
    var isAtEnd: Bool { currentIndex >= elementCount }

    @inline(__always) private mutating func read<T>(_ body: (ValueReader, inout Int) throws(ReadFailure) -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at its end"))
        }
        do throws(ReadFailure) {
            var position = offset
            let value = try body(state.reader, &position)
            offset = position
            currentIndex += 1
            return value
        } catch {
            throw error.decodingError(T.self, path: codingPath + [IndexKey(currentIndex)])
        }
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let isNull = try read { (reader, o) throws(ReadFailure) -> Bool in
            if try reader.peekTag(at: o) == .null { o += 1; return true }
            return false
        }
        if !isNull { currentIndex -= 1 }
        return isNull
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read { (reader, o) throws(ReadFailure) in try reader.bool(at: &o) } }
    mutating func decode(_ type: String.Type) throws -> String { try read { (reader, o) throws(ReadFailure) in try reader.string(at: &o) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try read { (reader, o) throws(ReadFailure) in try reader.double(at: &o) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try read { (reader, o) throws(ReadFailure) in try reader.float(at: &o) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    @inline(__always) private mutating func integer<T: FixedWidthInteger>() throws -> T {
        try read { (reader, o) throws(ReadFailure) in try reader.integer(T.self, at: &o) }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at its end"))
        }
        var position = offset
        let (index, level) = (currentIndex, level)
        let value = try stateRef._withUnsafeGuaranteedRef { try $0.decodeValue(type, at: &position, key: IndexKey(index), level: level) }
        offset = position
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try nextDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try nextDecoder() }

    /// A decoder for the next element, which this container then moves past.
    private mutating func nextDecoder() throws -> ValueDecoderImpl {
        guard level < ValueFormat.maxDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Nesting deeper than \(ValueFormat.maxDepth) levels"))
        }
        let start = offset
        let level = level
        try read { (reader, o) throws(ReadFailure) in try reader.skip(at: &o, depth: level) }
        return ValueDecoderImpl(state: state, offset: start, depth: depth, level: level + 1)
    }
}

/// One value in the input.
struct SingleValueDecodingContainerImpl: SingleValueDecodingContainer {
    /// Unretained, as in `KeyedValueDecodingContainer`.
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

    private var state: DecodingState { stateRef.takeUnretainedValue() }
    var codingPath: [any CodingKey] { Array(state.path.prefix(depth)) }

    @inline(__always) private func read<T>(_ body: (inout Int) throws(ReadFailure) -> T) throws -> T {
        var position = offset
        do throws(ReadFailure) { return try body(&position) } catch { throw error.decodingError(T.self, path: codingPath) }
    }

    func decodeNil() -> Bool {
        // Malformed bytes are "not null"; the decode that follows throws the typed error.
        (try? state.reader.peekTag(at: offset)) == .null
    }

    func decode(_ type: Bool.Type) throws -> Bool { try read { (o) throws(ReadFailure) in try state.reader.bool(at: &o) } }
    func decode(_ type: String.Type) throws -> String { try read { (o) throws(ReadFailure) in try state.reader.string(at: &o) } }
    func decode(_ type: Double.Type) throws -> Double { try read { (o) throws(ReadFailure) in try state.reader.double(at: &o) } }
    func decode(_ type: Float.Type) throws -> Float { try read { (o) throws(ReadFailure) in try state.reader.float(at: &o) } }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    @inline(__always) private func integer<T: FixedWidthInteger>() throws -> T {
        try read { (o) throws(ReadFailure) in try state.reader.integer(T.self, at: &o) }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        var position = offset
        return try state.decodeValue(type, at: &position, key: nil, level: level)
    }
}

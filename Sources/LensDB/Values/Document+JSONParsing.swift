import Foundation

extension Document {
    /// Parses JSON text (RFC 8259, plus the bare words `NaN`, `Infinity` and
    /// `-Infinity` that ``jsonString(pretty:)`` writes for non-finite doubles).
    ///
    /// Integers become `.int` (or `.uint` above `Int64.max`); numbers with a
    /// fraction or exponent, and integers beyond `UInt64`, become `.double`.
    /// Strings stay strings: JSON does not say which ones were dates or UUIDs.
    /// For a repeated object key the last value wins.
    ///
    /// - Throws: `DecodingError.dataCorrupted` with the byte offset of the
    ///   first error, including nesting deeper than ``ValueFormat/maxDepth``.
    /// - Complexity: O(*n*) in the length of `json`.
    public init(json: String) throws {
        var json = json
        self = try json.withUTF8 { try Document(json: UnsafeRawBufferPointer($0)) }
    }

    /// Parses JSON from UTF-8 bytes; see `init(json:)` taking a `String`.
    ///
    /// - Throws: As `init(json:)` taking a `String`.
    public init(json bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { try Document(json: $0) }
    }

    private init(json buffer: UnsafeRawBufferPointer) throws {
        var parser = JSONParser(bytes: buffer)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == buffer.count else { throw parser.failure("Unexpected text after the JSON value") }
        self = value
    }
}

/// A recursive-descent JSON parser over borrowed UTF-8 bytes.
struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func failure(_ reason: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "Invalid JSON at byte \(offset): \(reason)"))
    }

    mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[offset]) { offset += 1 }
    }

    private mutating func literal(_ word: String) -> Bool {
        let utf8 = Array(word.utf8)
        guard bytes.count - offset >= utf8.count, zip(bytes[offset...], utf8).allSatisfy({ $0 == $1 }) else { return false }
        offset += utf8.count
        return true
    }

    mutating func value(depth: Int) throws -> Document {
        skipWhitespace()
        guard offset < bytes.count else { throw failure("Unexpected end of text") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "N"), UInt8(ascii: "I"): return try number()
        default:
            if literal("null") { return .null }
            if literal("true") { return .bool(true) }
            if literal("false") { return .bool(false) }
            throw failure("Unexpected character")
        }
    }

    private mutating func nest(_ depth: Int) throws {
        guard depth < ValueFormat.maxDepth else { throw failure("Nesting deeper than \(ValueFormat.maxDepth)") }
        offset += 1
        skipWhitespace()
    }

    private mutating func array(depth: Int) throws -> Document {
        try nest(depth)
        var elements: [Document] = []
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(elements) }
        while true {
            elements.append(try value(depth: depth + 1))
            if try endOrComma("]") { return .array(elements) }
        }
    }

    private mutating func object(depth: Int) throws -> Document {
        try nest(depth)
        var entries: [String: Document] = [:]
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(entries) }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw failure("Expected a key") }
            let key = try string()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw failure("Expected ':'") }
            offset += 1
            entries[key] = try value(depth: depth + 1)
            if try endOrComma("}") { return .object(entries) }
        }
    }

    /// After an element: true at the closing bracket, false after a comma.
    private mutating func endOrComma(_ close: Unicode.Scalar) throws -> Bool {
        skipWhitespace()
        guard offset < bytes.count else { throw failure("Unexpected end of text") }
        let byte = bytes[offset]
        offset += 1
        if byte == UInt8(ascii: close) { return true }
        if byte == UInt8(ascii: ",") { return false }
        offset -= 1
        throw failure("Expected ',' or '\(close)'")
    }

    private mutating func number() throws -> Document {
        if literal("NaN") { return .double(.nan) }
        if literal("Infinity") { return .double(.infinity) }
        if literal("-Infinity") { return .double(-.infinity) }
        let start = offset
        var isInteger = true
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                isInteger = false
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), byte != UInt8(ascii: "-"), byte != UInt8(ascii: "+") {
                break
            }
            offset += 1
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        guard Document.isJSONNumber(text) else {
            offset = start
            throw failure("Invalid number \"\(text)\"")
        }
        if isInteger, let value = Int64(text) { return .int(value) }
        if isInteger, let value = UInt64(text) { return .uint(value) }
        guard let value = Double(text) else {
            offset = start
            throw failure("Invalid number \"\(text)\"")
        }
        return .double(value)
    }

}

extension Document {
    /// Whether `text` has RFC 8259's number grammar:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        var scalars = Substring(text).utf8[...]
        func digits() -> Int {
            let count = scalars.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            scalars = scalars.dropFirst(count)
            return count
        }
        if scalars.first == UInt8(ascii: "-") { scalars = scalars.dropFirst() }
        if scalars.first == UInt8(ascii: "0") { scalars = scalars.dropFirst() } else if digits() == 0 { return false }
        if scalars.first == UInt8(ascii: ".") {
            scalars = scalars.dropFirst()
            if digits() == 0 { return false }
        }
        if scalars.first == UInt8(ascii: "e") || scalars.first == UInt8(ascii: "E") {
            scalars = scalars.dropFirst()
            if scalars.first == UInt8(ascii: "+") || scalars.first == UInt8(ascii: "-") { scalars = scalars.dropFirst() }
            if digits() == 0 { return false }
        }
        return scalars.isEmpty
    }
}

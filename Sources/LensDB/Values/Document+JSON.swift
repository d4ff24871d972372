import Foundation

extension Document {
    /// This document as JSON text, deterministic: object keys sorted by their
    /// UTF-8 bytes, numbers in Swift's shortest round-tripping form.
    ///
    /// Values JSON has no type for become strings: `.date` an ISO 8601 time
    /// with fractional seconds, `.uuid` its canonical string, `.bytes` base64.
    /// A date outside years 1 to 9999 (or not finite, which only damage
    /// makes) is a number instead, its seconds since 2001, as a
    /// `Codable` `Date` is by default: ISO 8601 text would name another date.
    /// Non-finite doubles are written as the bare words `NaN`, `Infinity` and
    /// `-Infinity` (as JSON5 does), which ``init(json:)-(String)`` reads back.
    ///
    /// - Parameter pretty: Two-space indentation and one entry a line.
    /// - Complexity: O(*n*) in the output, plus sorting each object's keys.
    public func jsonString(pretty: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        appendJSON(to: &output, pretty: pretty, indent: 0)
        return String(decoding: output, as: UTF8.self)
    }

    private func appendJSON(to output: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case let .bool(value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case let .int(value): output.append(contentsOf: String(value).utf8)
        case let .uint(value): output.append(contentsOf: String(value).utf8)
        case let .double(value): output.append(contentsOf: Document.jsonNumber(value).utf8)
        case let .string(value): Document.appendQuoted(value, to: &output)
        case let .bytes(value): Document.appendQuoted(Data(value).base64EncodedString(), to: &output)
        case let .date(value) where Document.iso8601Years.contains(value.timeIntervalSince1970):
            Document.appendQuoted(value.formatted(Document.iso8601), to: &output)
        case let .date(value):
            // Outside years 1–9999 the formatter writes a wrong date (it
            // clamps; NaN becomes 4713 BC). Seconds since 2001 read back
            // as the same date.
            output.append(contentsOf: Document.jsonNumber(value.timeIntervalSinceReferenceDate).utf8)
        case let .uuid(value): Document.appendQuoted(value.uuidString, to: &output)
        case let .array(elements):
            appendContainer("[", "]", elements.count, to: &output, pretty: pretty, indent: indent) { index, output in
                elements[index].appendJSON(to: &output, pretty: pretty, indent: indent + 1)
            }
        case let .object(entries):
            let keys = entries.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            appendContainer("{", "}", keys.count, to: &output, pretty: pretty, indent: indent) { index, output in
                Document.appendQuoted(keys[index], to: &output)
                output.append(contentsOf: (pretty ? ": " : ":").utf8)
                entries[keys[index]]!.appendJSON(to: &output, pretty: pretty, indent: indent + 1)
            }
        }
    }

    private func appendContainer(
        _ open: Unicode.Scalar, _ close: Unicode.Scalar, _ count: Int, to output: inout [UInt8],
        pretty: Bool, indent: Int, element: (Int, inout [UInt8]) -> Void
    ) {
        output.append(UInt8(ascii: open))
        for index in 0..<count {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            if pretty { Document.newline(indent + 1, &output) }
            element(index, &output)
        }
        if pretty, count > 0 { Document.newline(indent, &output) }
        output.append(UInt8(ascii: close))
    }

    private static func newline(_ indent: Int, _ output: inout [UInt8]) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    static let iso8601 = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    /// The dates, in seconds since 1970, that ``iso8601`` writes as they
    /// are: from 0001-01-01 through 9999-12-31 (UTC).
    static let iso8601Years = -62_135_596_800.0..<253_402_300_800.0

    static func jsonNumber(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        // Swift's description is the shortest text that reads back to the same
        // bits, and always has a "." or an exponent, so it parses as a double.
        return value.description
    }

    static func appendQuoted(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = String(byte, radix: 16)
                output.append(contentsOf: ("\\u00" + (hex.count == 1 ? "0" : "") + hex).utf8)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

import Foundation

extension JSONParser {
    /// A quoted string at `offset`, escapes resolved. Unpaired surrogates
    /// become U+FFFD, as invalid UTF-8 does.
    mutating func string() throws -> String {
        offset += 1  // the opening quote
        var utf8: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &utf8)
            case 0..<0x20:
                offset -= 1
                throw failure("Control character in a string")
            default:
                utf8.append(byte)
            }
        }
        throw failure("Unterminated string")
    }

    private mutating func escape(into utf8: inout [UInt8]) throws {
        guard offset < bytes.count else { throw failure("Unterminated string") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hex4())
            if (0xD800..<0xDC00).contains(scalar), bytes.count - offset >= 6,
               bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") {
                let saved = offset
                offset += 2
                let low = UInt32(try hex4())
                if (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    offset = saved
                }
            }
            utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
        default:
            offset -= 1
            throw failure("Invalid escape")
        }
    }

    private mutating func hex4() throws -> UInt16 {
        guard bytes.count - offset >= 4, let value = UInt16(String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self), radix: 16) else {
            throw failure("Invalid \\u escape")
        }
        offset += 4
        return value
    }
}

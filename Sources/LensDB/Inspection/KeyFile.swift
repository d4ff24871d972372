import LensLog

extension EncryptionKey {
    /// Reads a key file as `logtool --key-file` does: exactly 32 bytes, or
    /// 64 hex digits (either case) with at most a trailing newline. The key
    /// itself is never printed; errors say only what is wrong with the file.
    /// - Throws: ``InspectionError/badKeyFile(path:reason:)``, or
    ///   `StorageError` when the file cannot be read.
    public init(keyFile path: String, fileSystem: any FileSystem = POSIXFileSystem()) throws {
        let handle = try fileSystem.openFile(at: path, mode: .readOnly)
        defer { handle.close() }
        // A key file is small: reading one byte more than the longest form
        // tells a longer file without reading all of it.
        var bytes = try handle.read(at: 0, count: 2 * EncryptionKey.byteCount + 3)
        if bytes.count == EncryptionKey.byteCount {
            try self.init(bytes: bytes)
            return
        }
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count == 2 * EncryptionKey.byteCount, let decoded = Self.hexBytes(bytes) else {
            throw InspectionError.badKeyFile(
                path: path, reason: bytes.count > 2 * EncryptionKey.byteCount ? "it is longer than a key" : "it holds \(bytes.count) bytes that are neither a raw key nor 64 hex digits")
        }
        try self.init(bytes: decoded)
    }

    /// The bytes that pairs of hex digits spell; nil when one is not a hex digit.
    private static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

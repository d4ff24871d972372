import LensDB
import LensLog

/// Fixed encryption keys for tests: the same bytes, and so the same key
/// ids, on every run.
public enum TestKeys {
    /// Bytes 0x00, 0x01, …, 0x1f: the key of the format articles' worked examples.
    public static let first = key(from: 0)
    /// Bytes 0x20 … 0x3f.
    public static let second = key(from: 0x20)
    /// Bytes 0x40 … 0x5f.
    public static let third = key(from: 0x40)

    /// The 32 bytes `start`, `start + 1`, …
    public static func key(from start: UInt8) -> EncryptionKey {
        // 32 bytes are always a valid key.
        try! EncryptionKey(bytes: (0..<32).map { start &+ UInt8($0) })
    }
}

extension SimulatedFileSystem {
    /// Every file under `directory` with its bytes, as the disk holds them now.
    public func snapshotOfFiles(in directory: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try listDirectory(directory) { files["\(directory)/\(name)"] = contents(of: "\(directory)/\(name)") }
        return files
    }

    /// A new simulated file system holding `files`, each durable.
    public static func holding(_ files: [String: [UInt8]]) -> SimulatedFileSystem {
        let fileSystem = SimulatedFileSystem()
        for (path, bytes) in files.sorted(by: { $0.key < $1.key }) { fileSystem.setContents(bytes, of: path) }
        return fileSystem
    }
}

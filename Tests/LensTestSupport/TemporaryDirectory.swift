import Foundation

/// A fresh directory under the system's temporary directory, removed on `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "lensdb") throws {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Deletes the directory and everything in it.
    public func remove() {
        // A leftover temporary directory is harmless; a test must not fail on cleanup.
        try? FileManager.default.removeItem(atPath: path)
    }
}

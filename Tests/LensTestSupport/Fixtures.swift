import Foundation
import LensDB
import LensLog

/// The stores in `Tests/Fixtures`: states real crashes left behind. Opening
/// one writes to it, so tests always work on a copy.
public enum Fixtures {
    /// `Tests/Fixtures`, found from this file's place in the checkout.
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// Copies the fixture store `name` (e.g. "torn-batch-after-log-swap")
    /// into `parent` and returns the copy's path.
    public static func copy(_ name: String, into parent: TemporaryDirectory) throws -> String {
        let target = "\(parent.path)/\(name).lensdb"
        try FileManager.default.copyItem(atPath: "\(directory)/\(name).lensdb", toPath: target)
        return target
    }

    /// Copies the fixture directory `name`, which is not a store (e.g.
    /// "foreign-directory"), into `parent` and returns the copy's path.
    public static func copyDirectory(_ name: String, into parent: TemporaryDirectory) throws -> String {
        let target = "\(parent.path)/\(name)"
        try FileManager.default.copyItem(atPath: "\(directory)/\(name)", toPath: target)
        return target
    }

    /// Plants the fixture store `name` at `path` on a simulated file system,
    /// every byte and name durable, as the disk held it after the crash.
    public static func plant(_ name: String, at path: String, on fileSystem: SimulatedFileSystem) throws {
        let source = "\(directory)/\(name).lensdb"
        for file in try FileManager.default.contentsOfDirectory(atPath: source).sorted() {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(source)/\(file)")))
            fileSystem.setContents(bytes, of: "\(path)/\(file)")
        }
    }
}

extension StoreState {
    /// Every table entry and root document as bytes, for comparing two opens.
    public func everything() throws -> [String: [[UInt8]: [UInt8]]] {
        var all: [String: [[UInt8]: [UInt8]]] = [:]
        for name in tableNames {
            for (key, value) in entries(in: name) { all["table \(name)", default: [:]][key] = try value.bytes() }
        }
        for name in rootNames { all["root \(name)", default: [:]][[]] = try root(named: name)!.bytes() }
        return all
    }
}

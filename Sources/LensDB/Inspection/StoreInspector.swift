import Foundation
import LensLog

/// Looks inside a store without the program's types: the library behind
/// `logtool`. Reads never take the store's lock and never change a file;
/// ``repair(to:progress:)``, ``repairInPlace(progress:)`` and ``compact(progress:)`` take the lock and
/// refuse while another process holds it.
///
/// Thread-safety: a value type; each call opens the files it needs.
public struct StoreInspector: Sendable {
    public let path: String
    let fileSystem: any FileSystem
    var directory: StoreDirectory { StoreDirectory(path: path, fileSystem: fileSystem) }

    /// - Parameters:
    ///   - path: the store's directory; a trailing slash is ignored.
    ///   - fileSystem: where the store lives; tests pass a simulated one.
    public init(path: String, fileSystem: any FileSystem = POSIXFileSystem()) {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
        self.fileSystem = fileSystem
    }

    /// Lists the store's files, or says why `path` is not a store.
    /// - Throws: ``InspectionError/notAStore(path:reason:)``.
    func listing() throws -> StoreDirectory.Listing {
        guard fileSystem.fileExists(at: path) else { throw InspectionError.notAStore(path: path, reason: "it does not exist") }
        let listing: StoreDirectory.Listing
        do {
            listing = try directory.list()
        } catch {
            throw InspectionError.notAStore(path: path, reason: "it is not a readable directory (\(error))")
        }
        guard !listing.logs.isEmpty || !listing.snapshots.isEmpty || !listing.setAside.isEmpty else {
            throw InspectionError.notAStore(path: path, reason: "it holds no LensDB log or snapshot")
        }
        return listing
    }

    func read(_ file: String) throws -> [UInt8] {
        let handle = try fileSystem.openFile(at: file, mode: .readOnly)
        defer { handle.close() }
        return try handle.readAll()
    }

    /// The store's state as open would recover it, without the lock and without changing a file.
    func recoveredState(policy: RecoveryPolicy, progress: ProgressHandler? = nil) throws -> (StoreState, RecoveryReport) {
        var state = StoreState()
        let listing = try listing()
        var reading = ReadingProgress(listing, fileSystem: fileSystem, handler: progress)
        let chain = LogChain(directory: directory, policy: policy, setAsideDamaged: false)
        let report = try chain.recover(listing: listing, loadSnapshot: { snapshot in
            state = try Store.loadState(from: snapshot)
            reading.read(snapshot: snapshot.path)
        }, apply: { record, file in
            try Store.replay(record, from: file, into: &state)
            reading.read(record, in: file)
        })
        reading.finish()
        return (state, report)
    }
}

/// `text` without the `file: ` it starts with (errors name their file; the
/// reports name it already).
func stripping(_ file: String, from text: String) -> String {
    var text = text
    while text.hasPrefix(file + ": ") { text.removeFirst(file.count + 2) }
    return text
}

/// Why `logtool` could not do what it was asked.
public enum InspectionError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAStore(path: String, reason: String)
    /// Another process writes the store; `repair` and `compact` need it closed.
    case locked(path: String, holder: Int32?)
    /// `repair --output` will not overwrite anything.
    case outputExists(path: String)

    public var description: String {
        switch self {
        case let .notAStore(path, reason): "\(path) is not a LensDB store: \(reason)"
        case let .locked(path, holder):
            "\(path) is in use by \(holder.map { "process \($0)" } ?? "another process"); close it there, then retry"
        case let .outputExists(path): "\(path) already exists; choose a new output path"
        }
    }
}

/// A stored value shown without its type: the decoded ``Document`` as JSON,
/// or, when the bytes are not in the value encoding, their hex and why.
///
/// JSON shape: `{"json": <value>}` or `{"hex": "ff00", "problem": "..."}`.
public struct RenderedValue: Codable, Sendable, Equatable {
    public var json: Document?
    public var hex: String?
    /// Why the bytes did not decode; nil when ``json`` is set.
    public var problem: String?

    public init(_ bytes: [UInt8]) {
        do {
            json = try Document(decodingBinary: bytes)
        } catch {
            hex = bytes.map { String(format: "%02x", $0) }.joined()
            problem = "\(error)"
        }
    }

    /// One line of text: the JSON, or `0x…` for bytes that do not decode.
    public var text: String { json?.jsonString() ?? "0x" + (hex ?? "") }
}

/// JSON as `logtool --json` prints it: sorted keys, ISO 8601 dates, and
/// NaN / ±infinity as strings so that every value prints.
public func inspectionJSON<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

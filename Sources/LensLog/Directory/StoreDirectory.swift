/// The files of one store and how they are named.
///
/// A store is a directory:
/// - `LOCK`: the process lock (its content: the holder's pid);
/// - `CLOSED`: written by a clean close, removed by the next open;
/// - `snapshot-<generation>.snap`: the state through some LSN;
/// - `log-<generation>.log`: transactions after it;
/// - `*.tmp`: a snapshot being written; removed on open;
/// - `*.damaged`: a file recovery or repair set aside; never read, never deleted.
///
/// Generations are 16 hex digits, so names sort in generation order. A
/// snapshot of generation G holds everything before log G, which starts at
/// the snapshot's last LSN + 1. Which files are current is decided on open by
/// ``LogChain``: the newest snapshot that verifies and whose logs continue it.
public struct StoreDirectory: Sendable {
    public let path: String
    public let fileSystem: any FileSystem

    public static let lockName = "LOCK"
    /// Present only between a clean close and the next open: the last
    /// session flushed everything and met no I/O error.
    public static let closedMarkerName = "CLOSED"
    static let logPrefix = "log-", logSuffix = ".log"
    static let snapshotPrefix = "snapshot-", snapshotSuffix = ".snap"
    public static let temporarySuffix = ".tmp"
    public static let setAsideSuffix = ".damaged"

    public init(path: String, fileSystem: any FileSystem) {
        self.path = path
        self.fileSystem = fileSystem
    }

    public var lockPath: String { "\(path)/\(Self.lockName)" }
    public var closedMarkerPath: String { "\(path)/\(Self.closedMarkerName)" }

    public func logPath(generation: UInt64) -> String {
        "\(path)/\(Self.logPrefix)\(Self.hex(generation))\(Self.logSuffix)"
    }

    public func snapshotPath(generation: UInt64) -> String {
        "\(path)/\(Self.snapshotPrefix)\(Self.hex(generation))\(Self.snapshotSuffix)"
    }

    /// What the directory holds, classified by name.
    public struct Listing: Sendable, Equatable {
        /// (generation, path), ascending.
        public var logs: [(generation: UInt64, path: String)] = []
        /// (generation, path), ascending.
        public var snapshots: [(generation: UInt64, path: String)] = []
        public var temporaries: [String] = []
        public var setAside: [String] = []
        /// Names LensDB did not write; left alone.
        public var unknown: [String] = []

        public static func == (a: Listing, b: Listing) -> Bool {
            a.logs.map(\.path) == b.logs.map(\.path) && a.snapshots.map(\.path) == b.snapshots.map(\.path)
                && a.temporaries == b.temporaries && a.setAside == b.setAside && a.unknown == b.unknown
        }

        /// The highest generation of any log or snapshot (0 for none).
        public var newestGeneration: UInt64 {
            max(logs.last?.generation ?? 0, snapshots.last?.generation ?? 0)
        }
    }

    /// Lists and classifies the directory's files. - Throws: ``StorageError``.
    public func list() throws -> Listing {
        var listing = Listing()
        for name in try fileSystem.listDirectory(path) where name != Self.lockName && name != Self.closedMarkerName {
            let full = "\(path)/\(name)"
            if name.hasSuffix(Self.temporarySuffix) {
                listing.temporaries.append(full)
            } else if name.hasSuffix(Self.setAsideSuffix) {
                listing.setAside.append(full)
            } else if let generation = Self.generation(in: name, prefix: Self.logPrefix, suffix: Self.logSuffix) {
                listing.logs.append((generation, full))
            } else if let generation = Self.generation(in: name, prefix: Self.snapshotPrefix, suffix: Self.snapshotSuffix) {
                listing.snapshots.append((generation, full))
            } else {
                listing.unknown.append(full)
            }
        }
        listing.logs.sort { $0.generation < $1.generation }
        listing.snapshots.sort { $0.generation < $1.generation }
        return listing
    }

    /// Renames a damaged file to `<name>.damaged` (or `<name>.2.damaged`, …) and
    /// makes the rename durable. Returns the new path.
    @discardableResult
    public func setAside(_ file: String) throws -> String {
        var target = file + Self.setAsideSuffix
        var attempt = 2
        while fileSystem.fileExists(at: target) {
            target = "\(file).\(attempt)\(Self.setAsideSuffix)"
            attempt += 1
        }
        try fileSystem.rename(file, to: target)
        try fileSystem.syncDirectory(at: path)
        return target
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    static func generation(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix),
              name.count == prefix.count + 16 + suffix.count else { return nil }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count), radix: 16)
    }
}

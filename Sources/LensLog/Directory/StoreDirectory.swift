/// The files of one store and how they are named.
///
/// A store is a directory:
/// - `LENSDB`: says the directory is a LensDB store (``identityName``);
/// - `LOCK`: the process lock (its content: the holder's pid);
/// - `CLOSED`: written by a clean close, removed by the next open (``CleanClose``);
/// - `snapshot-<generation>.snap`: the state through some LSN;
/// - `log-<generation>.log`: transactions after it;
/// - `snapshot-<generation>.snap.tmp`, `log-<generation>.log.tmp`: a
///   snapshot or log being written; removed on open;
/// - `log-….damaged`, `snapshot-….damaged`: a file recovery or repair set
///   aside; never read by an open (when no snapshot is usable, `logtool
///   repair` salvages the newest whose header verifies, set aside or
///   not), never deleted.
///
/// Any other name is not the store's: LensDB never reads, moves or deletes
/// it. A directory that holds other files and none of these is not a store
/// (``identify()``), and an open refuses to make it one unless told to.
///
/// Generations are 16 hex digits, so names sort in generation order. A
/// snapshot of generation G holds everything before log G, which starts at
/// the snapshot's last LSN + 1. Which files are current is decided on open by
/// ``LogChain``: the newest snapshot that verifies and whose logs continue it.
public struct StoreDirectory: Sendable {
    public let path: String
    public let fileSystem: any FileSystem

    /// The file that marks a directory as a LensDB store, written when an
    /// open creates the store (and by the first writable open of a store
    /// an earlier LensDB created). Its content, ``identityContents``, is
    /// for people; its presence is what counts.
    public static let identityName = "LENSDB"
    public static let identityContents = Array("LensDB store: do not edit or remove the files in this directory by hand; use logtool\n".utf8)
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

    /// `path` without trailing slashes (`/` stays `/`): `store/` and
    /// `store` name one store, whose parent is the same either way.
    public static func normalized(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }

    public var identityPath: String { "\(path)/\(Self.identityName)" }
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
        /// Snapshots and logs a crash left half written (`….tmp` of a log's or snapshot's name).
        public var temporaries: [String] = []
        /// Files recovery set aside as damaged (`….damaged`); never read by an open.
        public var setAside: [String] = []
        /// Names LensDB did not write; left alone.
        public var unknown: [String] = []
        /// Whether the directory holds the ``StoreDirectory/identityName`` marker.
        public var hasIdentity = false
        /// Whether it holds the lock file or the clean-close marker.
        public var hasLockOrMarker = false

        public static func == (a: Listing, b: Listing) -> Bool {
            a.logs.map(\.path) == b.logs.map(\.path) && a.snapshots.map(\.path) == b.snapshots.map(\.path)
                && a.temporaries == b.temporaries && a.setAside == b.setAside && a.unknown == b.unknown
                && a.hasIdentity == b.hasIdentity && a.hasLockOrMarker == b.hasLockOrMarker
        }

        /// Whether the directory is a store, could become one, or belongs to someone else.
        public var identity: Identity {
            if hasIdentity || !logs.isEmpty || !snapshots.isEmpty || !setAside.isEmpty || !temporaries.isEmpty {
                return .store
            }
            // The lock and the marker alone are a store opened but never
            // written by an earlier LensDB, unless other files share the
            // directory: many programs name a lock file LOCK.
            if unknown.isEmpty { return hasLockOrMarker ? .store : .empty }
            return .foreign(entries: unknown)
        }

        /// The snapshots among ``setAside`` (not a temporary one a crash left),
        /// by generation, then in the order they were set aside.
        public var setAsideSnapshots: [String] {
            setAsideByGeneration.map(\.path)
        }

        /// Every snapshot, in place or set aside, newest generation first;
        /// within a generation the one in place, then those set aside, the
        /// latest first. The order `logtool repair` tries them in, taking
        /// the first whose header verifies.
        public var snapshotsNewestFirst: [String] {
            let inPlace = snapshots.map { (generation: $0.generation, copy: Int.max, path: $0.path) }
            return (inPlace + setAsideByGeneration)
                .sorted { ($0.generation, $0.copy) > ($1.generation, $1.copy) }.map(\.path)
        }

        private var setAsideByGeneration: [(generation: UInt64, copy: Int, path: String)] {
            setAside.compactMap { path -> (generation: UInt64, copy: Int, path: String)? in
                guard let name = path.split(separator: "/").last, let (stem, copy) = StoreDirectory.setAsideStem(String(name)),
                      let generation = StoreDirectory.generation(in: stem, prefix: snapshotPrefix, suffix: snapshotSuffix)
                else { return nil }
                return (generation, copy, path)
            }
            .sorted { ($0.generation, $0.copy) < ($1.generation, $1.copy) }
        }

        /// The highest generation of any log or snapshot (0 for none).
        public var newestGeneration: UInt64 {
            max(logs.last?.generation ?? 0, snapshots.last?.generation ?? 0)
        }
    }

    /// What a directory is to LensDB.
    public enum Identity: Sendable, Equatable {
        /// A LensDB store: it holds the identity marker, or files only a store writes.
        case store
        /// Empty (or not there yet): an open may create a store in it.
        case empty
        /// It holds `entries` (paths) and nothing of a store: an open refuses it.
        case foreign(entries: [String])
    }

    /// What the directory at ``path`` is: a store, empty, or someone else's.
    /// - Throws: ``StorageError`` when it cannot be listed (not a directory, say).
    public func identify() throws -> Identity {
        try list().identity
    }

    /// Writes the identity marker, durably, unless it is there already.
    public func writeIdentity() throws {
        guard !fileSystem.fileExists(at: identityPath) else { return }
        let file = try fileSystem.openFile(at: identityPath, mode: .create)
        defer { file.close() }
        try file.write(Self.identityContents, at: 0)
        try fileSystem.syncDirectory(at: path)
    }

    /// Lists and classifies the directory's files. - Throws: ``StorageError``.
    public func list() throws -> Listing {
        var listing = Listing()
        for name in try fileSystem.listDirectory(path) {
            let full = "\(path)/\(name)"
            if name == Self.identityName {
                listing.hasIdentity = true
            } else if name == Self.lockName || name == Self.closedMarkerName {
                listing.hasLockOrMarker = true
            } else if name.hasSuffix(Self.temporarySuffix), Self.isDataFileName(String(name.dropLast(Self.temporarySuffix.count))) {
                listing.temporaries.append(full)
            } else if Self.isSetAsideName(name) {
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

    /// Whether `name` is what ``setAside(_:)`` makes of a log's, snapshot's
    /// or temporary file's name: `<name>.damaged` or `<name>.<n>.damaged`.
    static func isSetAsideName(_ name: String) -> Bool {
        guard var (stem, _) = setAsideStem(name) else { return false }
        if stem.hasSuffix(temporarySuffix) { stem = String(stem.dropLast(temporarySuffix.count)) }
        return isDataFileName(stem)
    }

    /// The name a file had before ``setAside(_:)`` renamed it to `name`, and
    /// which time that name was set aside: 1 for `<name>.damaged`, n for
    /// `<name>.<n>.damaged`. Nil for a name without the suffix.
    static func setAsideStem(_ name: String) -> (stem: String, copy: Int)? {
        guard name.hasSuffix(setAsideSuffix) else { return nil }
        let stem = String(name.dropLast(setAsideSuffix.count))
        if let dot = stem.lastIndex(of: "."), stem.index(after: dot) < stem.endIndex,
           stem[stem.index(after: dot)...].allSatisfy(\.isNumber) {
            return (String(stem[..<dot]), Int(stem[stem.index(after: dot)...]) ?? .max)
        }
        return (stem, 1)
    }

    /// Whether `name` is a log's or a snapshot's.
    static func isDataFileName(_ name: String) -> Bool {
        generation(in: name, prefix: logPrefix, suffix: logSuffix) != nil
            || generation(in: name, prefix: snapshotPrefix, suffix: snapshotSuffix) != nil
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

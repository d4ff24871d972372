import LensTestSupport
@testable import LensLog

/// A store directory on the simulated file system that tests write log
/// files into, byte by byte or through a `LogWriter`, and follow.
struct FollowedStore {
    let fileSystem = SimulatedFileSystem()
    let directory: StoreDirectory

    init() throws {
        try fileSystem.createDirectory(at: "/store")
        try fileSystem.syncDirectory(at: "/")
        directory = StoreDirectory(path: "/store", fileSystem: fileSystem)
    }

    func logPath(_ generation: UInt64) -> String { directory.logPath(generation: generation) }

    func follower() throws -> LogFollower {
        try LogFollower(directory: directory) { _ in }
    }

    /// A writer of log `generation` that syncs only when a commit asks.
    func writer(generation: UInt64 = 1, firstLSN: UInt64 = 1) throws -> LogWriter {
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        return try LogWriter.create(
            fileSystem: fileSystem, path: logPath(generation), generation: generation, firstLSN: firstLSN, options: options)
    }

    /// Makes log `generation` hold exactly `bytes` (durably, as a file already on disk).
    func plant(_ bytes: [UInt8], generation: UInt64 = 1) {
        fileSystem.setContents(bytes, of: logPath(generation))
    }

    /// Writes a snapshot of generation `generation` that holds nothing but its last LSN.
    func snapshot(generation: UInt64, lastLSN: UInt64) throws {
        let writer = try SnapshotWriter(
            fileSystem: fileSystem, path: directory.snapshotPath(generation: generation), generation: generation, lastLSN: lastLSN)
        _ = try writer.finish()
    }

    /// How many records of log `generation` would survive a power cut now.
    func durableRecords(generation: UInt64 = 1) throws -> Int {
        guard let bytes = fileSystem.durableContents(of: logPath(generation)),
              bytes.count >= LogFormat.fileHeaderSize else { return 0 }
        var reader = try LogReader(bytes: bytes, path: logPath(generation), policy: .salvage)
        var count = 0
        while try reader.next() != nil { count += 1 }
        return count
    }
}

extension [LogFollower.FollowedRecord] {
    var lsns: [UInt64] { map(\.record.lsn) }
}

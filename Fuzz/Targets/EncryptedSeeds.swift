// Writes the encrypted seeds of the libFuzzer targets, sealed with
// FuzzCipher: Fuzz/Targets/make-encrypted-seeds compiles and runs it. The
// seeds are committed; this is how to make them again (their nonce salts
// are random, so the bytes differ each time, and any of them will do).

@main
enum EncryptedSeeds {
    static func main() throws {
        let cipher = FuzzCipher()
        let fileSystem = SimulatedFileSystem()
        let directory = StoreDirectory(path: "/s", fileSystem: fileSystem)
        try fileSystem.createDirectory(at: "/s")
        let snapshot = try SnapshotWriter(
            fileSystem: fileSystem, path: directory.snapshotPath(generation: 1), generation: 1, lastLSN: 2, cipher: cipher)
        try snapshot.addTable(id: 0, name: "people")
        try snapshot.addTableEncoding(table: 0, key: 3, value: 2)
        for index in 0..<40 {
            try snapshot.addEntry(table: 0, key: [0x80, 0, 0, 0, 0, 0, 0, UInt8(index)], value: Array("person \(index) of the seed".utf8))
        }
        try snapshot.addRootEncoding(name: "settings", value: 2)
        try snapshot.addRoot(name: "settings", value: Array("dark".utf8))
        try snapshot.finish()
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        options.preallocationChunk = 0
        let log = try LogWriter.create(
            fileSystem: fileSystem, path: directory.logPath(generation: 1), generation: 1, firstLSN: 3, options: options, cipher: cipher)
        for index in 0..<3 {
            // A transaction of one put (operation 1): table "people", an 8-byte key, a value.
            var payload: [UInt8] = [1, 1]
            payload.appendLengthPrefixed("people")
            payload.appendLengthPrefixed([0x80, 0, 0, 0, 0, 0, 1, UInt8(index)])
            payload.appendLengthPrefixed(Array(repeating: UInt8(ascii: "a") + UInt8(index), count: 30 + 40 * index))
            try log.append(payload, durability: .full)
        }
        log.close()
        let snapshotBytes = fileSystem.contents(of: directory.snapshotPath(generation: 1))!
        let logBytes = fileSystem.contents(of: directory.logPath(generation: 1))!
        let seeds = "Fuzz/Targets/seeds"
        try write(logBytes, to: "\(seeds)/LogReader/encrypted-three-records.log")
        try write(snapshotBytes, to: "\(seeds)/Snapshot/encrypted-one-table.snap")
        let split = [UInt8(truncatingIfNeeded: snapshotBytes.count), UInt8(truncatingIfNeeded: snapshotBytes.count >> 8)]
        try write(split + snapshotBytes + logBytes, to: "\(seeds)/Recovery/encrypted-snapshot-and-log.bin")
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        let file = try POSIXFileSystem().openFile(at: path, mode: .create)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
        print("wrote \(path) (\(bytes.count) bytes)")
    }
}

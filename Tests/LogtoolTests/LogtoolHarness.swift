import Dispatch
import Foundation
import LensDB
import LensTestSupport

/// The built `logtool`: it sits beside the test bundle.
let logtoolBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("logtool")

/// Runs the built `logtool` and returns its exit status and output.
func logtool(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    try logtool(arguments, environment: [:])
}

/// Runs the built `logtool` with `environment` added to this process's.
/// With a `timeout`, a run still going then is killed (exit status 9 from
/// the signal, and "timed out" on stderr), so a hang fails the test instead
/// of stopping the suite.
func logtool(
    _ arguments: [String], environment: [String: String] = [:], timeout: Duration? = nil
) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = logtoolBinary
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    if let timeout {
        let seconds = Double(timeout.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            if process.isRunning {
                FileHandle.standardError.write(Data("logtool \(arguments.joined(separator: " ")) timed out\n".utf8))
                kill(process.processIdentifier, SIGKILL)
            }
        }
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// Golden stores, made by the library in a temporary directory.
struct GoldenStores {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("logtool") }

    /// The demo store; `compacted` moves its state into a snapshot first.
    func healthy(_ name: String = "healthy", compacted: Bool = false) throws -> String {
        let path = "\(directory.path)/\(name).lensdb"
        try DemoStore.write(at: path)
        if compacted {
            let store = try Store(at: path)
            let encoder = ValueEncoder()
            try store.write { tx in tx.put(try encoder.encode("after"), for: try encoder.encode(1), in: "extra") }
            try store.compact()
            store.close()
        }
        return path
    }

    func logPath(_ store: String) throws -> String {
        try StoreDirectory(path: store, fileSystem: POSIXFileSystem()).list().logs.last!.path
    }

    func snapshotPath(_ store: String) throws -> String {
        try StoreDirectory(path: store, fileSystem: POSIXFileSystem()).list().snapshots.last!.path
    }

    /// Rewrites a file through `change`.
    func edit(_ file: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    /// The healthy store with one byte flipped inside its second record, which
    /// valid records follow: returns the store, its log, and the record's offset.
    func flippedMidLog() throws -> (store: String, log: String, offset: Int) {
        let store = try healthy()
        let log = try logPath(store)
        let offsets = try recordOffsets(log)
        try edit(log) { $0[offsets[1] + 40] ^= 0x20 }
        return (store, log, offsets[1])
    }

    /// Offsets of the records in a log.
    func recordOffsets(_ log: String) throws -> [Int] {
        var reader = try LogReader(fileSystem: POSIXFileSystem(), path: log, policy: .strict)
        var offsets: [Int] = []
        while let record = try reader.next() { offsets.append(Int(record.offset)) }
        return offsets
    }
}

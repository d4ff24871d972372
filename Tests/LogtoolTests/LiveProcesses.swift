import Foundation
import LensDB
import Testing

/// The built LiveWriter (Tests/LiveWriter): it sits beside logtool.
let liveWriterBinary = logtoolBinary.deletingLastPathComponent().appendingPathComponent("LiveWriter")

/// Runs LiveWriter on `store` with `steps` and waits for it. Returns its
/// exit status, or the signal that ended it (`crash` ends it with SIGKILL).
@discardableResult
func runLiveWriter(_ store: String, _ steps: [String]) throws -> (status: Int32, signalled: Bool) {
    let process = Process()
    process.executableURL = liveWriterBinary
    process.arguments = [store] + steps
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
}

/// A process left running while the test goes on, its stdout written to a file.
final class BackgroundProcess {
    let process = Process()
    let outputPath: String

    init(_ executable: URL, _ arguments: [String], outputPath: String, environment: [String: String]? = nil) throws {
        self.outputPath = outputPath
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        _ = FileManager.default.createFile(atPath: outputPath + ".err", contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath + ".err"))
        try process.run()
    }

    /// Waits up to `seconds` for the process to end; kills it and returns false if it does not.
    func waitForExit(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            process.interrupt()
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        return true
    }

    /// Waits up to `seconds` until the output holds `count` whole lines.
    func waitForLines(_ count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while lines.count < count && Date() < deadline { usleep(10_000) }
        return lines.count >= count
    }

    /// The whole lines written so far.
    var lines: [String] {
        // A file not yet readable has no lines yet.
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// What the process wrote to stderr so far.
    var standardError: String {
        // No file yet: nothing written yet.
        (try? String(contentsOfFile: outputPath + ".err", encoding: .utf8)) ?? ""
    }
}

/// What LiveWriter stores in its table "items".
struct ExportedItem: Codable, Equatable {
    var id: Int64
    var name: String
    var revision: UInt64
}

/// The table "items" as the JSON lines of `dump --json` leave it, replayed
/// in order from an empty table; and the LSNs of the lines.
func replayItems(_ lines: [String]) throws -> (items: [Int64: ExportedItem], lsns: [UInt64]) {
    var items: [Int64: ExportedItem] = [:]
    var lsns: [UInt64] = []
    for line in lines {
        let transaction = try JSONDecoder().decode(DumpedTransaction.self, from: Data(line.utf8))
        lsns.append(transaction.lsn)
        for operation in transaction.operations where operation.table == "items" {
            guard case .int(let id)? = operation.key?.json else { continue }
            switch operation.op {
            case "put":
                let json = try #require(operation.value?.json).jsonString()
                items[id] = try JSONDecoder().decode(ExportedItem.self, from: Data(json.utf8))
            case "remove": items[id] = nil
            default: break
            }
        }
    }
    return (items, lsns)
}

/// The table "items" of the store at `path`, as an open recovers it, and its last LSN.
func storedItems(_ path: String) throws -> (items: [Int64: ExportedItem], lsn: UInt64) {
    var options = StoreOptions()
    options.readOnly = true
    let store = try Store(at: path, options: options)
    defer { store.close() }
    var items: [Int64: ExportedItem] = [:]
    for (_, value) in store.current.entries(in: "items") {
        let item = try ValueDecoder().decode(ExportedItem.self, from: try value.bytes())
        items[item.id] = item
    }
    return (items, store.current.lsn)
}

import Foundation
import LensDB

/// Peak memory of opening, verifying and dumping a store whose log is large
/// (1 GiB; `LENSDB_BENCH_LOG_MIB` changes it) and whose state is small: a
/// thousand keys overwritten again and again. Goal (issue 10): the open
/// peaks at most 64 MiB above the state it ends with. Each task runs in a
/// child process of its own, which reads its peak from /proc/self/status.
let recoveryMemoryWorkload = Workload(
    name: "recovery-memory",
    summary: "peak RSS of open, verify and dump above the state, for a store whose log is 1 GiB"
) {
    let mib = environmentInt("LENSDB_BENCH_LOG_MIB", default: 1024)
    let path = NSTemporaryDirectory() + "lensdb-bench-recovery-\(getpid()).lensdb"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let started = now()
    let logBytes = try fillOverwritten(at: path, logBytes: mib << 20)
    print("filled a log of \(logBytes >> 20) MiB (1,000 keys, 1 KiB values, 64 puts a transaction) in "
        + String(format: "%.1f s", now() - started) + "\n")
    // Rows print as each task ends: a dump of a large log takes a while.
    printTable(["task", "seconds", "peak RSS above start MiB", "kept after MiB", "state MiB", "peak above state MiB", "≤ 64 MiB"], [])
    var state = 0.0
    for task in ["open", "verify", "dump"] {
        let probe = try runProbe(["recovery-probe", task, path])
        if task == "open" { state = probe["retained"]! }
        let above = probe["peak"]! - (task == "dump" ? 0 : state)
        printRow([task, String(format: "%.2f", probe["seconds"]!), mebi(probe["peak"]!), mebi(probe["retained"]!),
                     task == "dump" ? "— (no state)" : mebi(state), mebi(above), above <= 64 * 1_048_576 ? "yes" : "no"])
    }
}

private func printRow(_ row: [String]) {
    print("| " + row.joined(separator: " | ") + " |")
    fflush(nil)
}

/// Runs this executable with `arguments` and parses the `name=value` pairs it prints.
func runProbe(_ arguments: [String]) throws -> [String: Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var result: [String: Double] = [:]
    for pair in output.split(whereSeparator: \.isWhitespace) {
        let parts = pair.split(separator: "=")
        if parts.count == 2, let value = Double(parts[1]) { result[String(parts[0])] = value }
    }
    guard process.terminationStatus == 0, !result.isEmpty else { throw ProbeFailed(output: output) }
    return result
}

struct ProbeFailed: Error { var output: String }

/// In a child process: runs `task` on the store at `path` and prints the
/// peak resident set above the start, what stays resident after (the state,
/// for an open), and the seconds it took.
func recoveryProbe(_ task: String, _ path: String) throws {
    trimMalloc()
    let before = residentBytes()
    resetPeakResident()
    let started = now()
    var kept: Store?
    switch task {
    case "open":
        kept = try Store(at: path, options: benchmarkOptions())
    case "verify":
        let report = try StoreInspector(path: path).verify()
        precondition(report.problems.isEmpty, "verify found problems: \(report.problems)")
    case "dump":
        var count = 0
        try StoreInspector(path: path).dump { _ in count += 1 }
        precondition(count > 0)
    default:
        preconditionFailure("unknown task \(task)")
    }
    let seconds = now() - started
    let peak = peakResidentBytes() - before
    trimMalloc()
    let retained = residentBytes() - before
    print("peak=\(peak) retained=\(retained) seconds=\(seconds)")
    kept?.close()
}

/// A store of 1,000 keys whose values are overwritten until the log holds
/// about `logBytes`; values are not compressible, so the log is that large.
/// Returns the log's size.
func fillOverwritten(at path: String, logBytes: Int) throws -> Int {
    var options = benchmarkOptions()
    options.compression = .none
    let store = try Store(at: path, options: options)
    var random = SplitMix(seed: 42)
    let values = (0..<257).map { _ in (0..<128).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } } }
    let keys = (0..<1000).map { Array("key-\($0)".utf8) }
    var written = 0
    var index = 0
    while written < logBytes {
        try store.write(durability: .buffered) { tx in
            for _ in 0..<64 {
                tx.put(values[index % values.count], for: keys[index % keys.count], in: "hot")
                index += 1
            }
        }
        written += 64 * (1024 + 16) + 64
    }
    store.close()
    let files = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".log") }
    return try files.reduce(0) { total, name in
        total + ((try FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0)
    }
}

/// A small, fast generator for benchmark data.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Resets this process's peak resident set (VmHWM) to its current one.
func resetPeakResident() {
    // "5" to clear_refs resets the peak (Linux 4.0 and later); where that
    // fails, the peak counts from the process's start, which only overstates.
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// This process's peak resident set since the last reset, from /proc/self/status.
func peakResidentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kib = Int(line.split(whereSeparator: \.isWhitespace)[1]) else { return 0 }
    return kib * 1024
}

func mebi(_ bytes: Double) -> String { String(format: "%.1f", bytes / 1_048_576) }

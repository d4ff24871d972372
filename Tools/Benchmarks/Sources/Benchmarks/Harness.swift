import Foundation

/// A named workload; `run` prints its own table.
struct Workload: Sendable {
    let name: String
    let summary: String
    let run: @Sendable () throws -> Void
}

/// Monotonic seconds.
func now() -> Double { seconds(of: CLOCK_MONOTONIC) }

/// CPU seconds the process has used, on every thread: steadier than
/// elapsed time on a shared machine, for work that spreads over threads.
func processCPU() -> Double { seconds(of: CLOCK_PROCESS_CPUTIME_ID) }

/// The reading of `clock`, in seconds.
private func seconds(of clock: clockid_t) -> Double {
    var time = timespec()
    clock_gettime(clock, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The integer in the environment variable `name`, or `fallback` when it
/// is unset or not an integer: how a workload takes a size or a count.
func environmentInt(_ name: String, default fallback: Int) -> Int {
    Int(ProcessInfo.processInfo.environment[name] ?? "") ?? fallback
}

/// Waits until the process is quiet: until a 20 ms slice in which all its
/// threads together used under 2 ms of CPU, or `limit` seconds. Work a
/// turn leaves running in the background (LensDB frees the version a large
/// commit replaced on a utility thread, after the commit returns) then
/// finishes before the next turn starts, instead of running inside it.
/// Returns the CPU seconds the process used while it waited; says so when
/// the process is still busy at `limit`.
@discardableResult
func settle(limit: Double = 2) -> Double {
    let (start, startCPU) = (now(), processCPU())
    var sliceCPU = startCPU
    repeat {
        Thread.sleep(forTimeInterval: 0.02)
        let cpu = processCPU()
        if cpu - sliceCPU < 0.002 { return cpu - startCPU }
        sliceCPU = cpu
    } while now() - start < limit
    print(String(format: "settle: the process was still busy after %.1f s; the next turn starts anyway", limit))
    return processCPU() - startCPU
}

/// Runs `body` repeatedly for at least `seconds` and returns operations per second,
/// where each call of `body` performs `operations` operations.
func rate(seconds: Double = 1.0, operations: Int = 1, _ body: () throws -> Void) rethrows -> Double {
    try body()  // warm up
    var count = 0
    let start = now()
    var elapsed = 0.0
    repeat {
        try body()
        count += operations
        elapsed = now() - start
    } while elapsed < seconds
    return Double(count) / elapsed
}

/// Prints a Markdown table.
func printTable(_ header: [String], _ rows: [[String]]) {
    print("| " + header.joined(separator: " | ") + " |")
    print("|" + header.map { _ in "---" }.joined(separator: "|") + "|")
    for row in rows { print("| " + row.joined(separator: " | ") + " |") }
}

func format(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
}

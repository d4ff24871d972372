// Usage: Benchmarks [workload…]   (no argument: all of them)
import Foundation

let workloads: [Workload] = [
    codecWorkload,
    logWorkload,
    openWorkload,
    compactionStallWorkload,
    lensWorkload,
    lensNotifyWorkload,
    lensDeltaWorkload,
]

let chosen = CommandLine.arguments.dropFirst()
for workload in workloads where chosen.isEmpty || chosen.contains(workload.name) {
    print("\n## \(workload.name): \(workload.summary)\n")
    do { try workload.run() } catch { print("failed: \(error)") }
}

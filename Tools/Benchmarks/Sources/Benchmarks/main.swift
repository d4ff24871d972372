// Usage: Benchmarks [workload…]   (no argument: all of them)
import Foundation

let workloads: [Workload] = [
    codecWorkload,
    logWorkload,
    openWorkload,
    compactionStallWorkload,
    compactionStall1MWorkload,
    recoveryMemoryWorkload,
    scaleWorkload,
    tablesWorkload,
    tableProfileWorkload,
    tableScaleWorkload,
    observationWorkload,
    lensWorkload,
    lensNotifyWorkload,
    lensDeltaWorkload,
    consistencyWorkload,
    encryptionWorkload,
    migrationWorkload,
]

if CommandLine.arguments.dropFirst().first == "memory-probe", let path = CommandLine.arguments.dropFirst(2).first {
    try memoryProbe(path)
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "w1-peak-probe", let side = CommandLine.arguments.dropFirst(2).first {
    try w1PeakProbe(side)
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "recovery-probe", CommandLine.arguments.count == 4 {
    try recoveryProbe(CommandLine.arguments[2], CommandLine.arguments[3])
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "scale-probe", CommandLine.arguments.count == 4 {
    try scaleProbe(CommandLine.arguments[2], CommandLine.arguments[3])
    exit(0)
}

let chosen = CommandLine.arguments.dropFirst()
for workload in workloads where chosen.isEmpty || chosen.contains(workload.name) {
    print("\n## \(workload.name): \(workload.summary)\n")
    do { try workload.run() } catch { print("failed: \(error)") }
}

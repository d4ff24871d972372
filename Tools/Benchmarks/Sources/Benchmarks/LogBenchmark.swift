import Dispatch
import Foundation
import LensLog
import Synchronization

/// Durable commits/s of LensDB's log against raw write+fdatasync loops on
/// the same disk, and group commit with 8 writers.
let logWorkload = Workload(
    name: "log",
    summary: "durable (.full) commits/s: LensDB log vs raw append+fdatasync and preallocated overwrite+fdatasync"
) {
    let directory = NSTemporaryDirectory() + "lensdb-bench-log-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let payload = [UInt8](repeating: 0x5A, count: 150)
    let frame = payload.count + LogFormat.frameHeaderSize
    var file = 0
    func nextPath() -> String { file += 1; return "\(directory)/bench-\(file).log" }

    let rawAppend = try rawLoop(path: nextPath(), frame: frame, preallocate: false)
    let rawPreallocated = try rawLoop(path: nextPath(), frame: frame, preallocate: true)
    let lens = try lensLoop(path: nextPath(), payload: payload, preallocationChunk: 4 << 20)
    let lensNoPreallocation = try lensLoop(path: nextPath(), payload: payload, preallocationChunk: 0)
    let best = max(rawAppend, rawPreallocated)
    printTable(["loop (1 writer, 178-byte records)", "commits/s", "vs best raw"], [
        ["raw pwrite at end of a growing file + fdatasync", format(rawAppend), percent(rawAppend / best)],
        ["raw pwrite into a preallocated file + fdatasync", format(rawPreallocated), percent(rawPreallocated / best)],
        ["LensDB log, .full, preallocated extents", format(lens), percent(lens / best)],
        ["LensDB log, .full, no preallocation", format(lensNoPreallocation), percent(lensNoPreallocation / best)],
    ])
    print("\npreallocated vs growing file (raw): \(String(format: "%.2f", rawPreallocated / rawAppend))×")

    let (concurrent, groupSize) = try concurrentLoop(path: nextPath(), payload: payload, threads: 8)
    print("")
    printTable(["writers", "commits/s", "vs 1 writer", "records per sync"], [
        ["1", format(lens), "1.00×", "1.00"],
        ["8", format(concurrent), String(format: "%.2f×", concurrent / lens), String(format: "%.2f", groupSize)],
    ])
}

private let seconds = 2.0

func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }

/// One writer, `.full` appends, for `seconds`.
private func lensLoop(path: String, payload: [UInt8], preallocationChunk: Int64) throws -> Double {
    var options = LogWriterOptions()
    options.compression = false
    options.preallocationChunk = preallocationChunk
    let writer = try LogWriter.create(fileSystem: POSIXFileSystem(), path: path, generation: 1, firstLSN: 1, options: options)
    defer { writer.close() }
    return try rate(seconds: seconds) { try writer.append(payload, durability: .full) }
}

/// The disk's own rate: pwrite `frame` bytes and fdatasync, in a loop.
private func rawLoop(path: String, frame: Int, preallocate: Bool) throws -> Double {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw POSIXError(.EIO) }
    defer { close(descriptor) }
    if preallocate { _ = posix_fallocate(descriptor, 0, 256 << 20) }
    _ = fsync(descriptor)
    let bytes = [UInt8](repeating: 0x5A, count: frame)
    var offset: off_t = 0
    return rate(seconds: seconds) {
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, frame, offset) }
        offset += off_t(frame)
        _ = fdatasync(descriptor)
    }
}

/// `threads` writers appending `.full` for `seconds`; returns commits/s and
/// the average number of records each sync covered.
private func concurrentLoop(path: String, payload: [UInt8], threads: Int) throws -> (Double, Double) {
    var options = LogWriterOptions()
    options.compression = false
    let writer = try LogWriter.create(fileSystem: POSIXFileSystem(), path: path, generation: 1, firstLSN: 1, options: options)
    defer { writer.close() }
    let deadline = now() + seconds
    let start = now()
    // Real threads: concurrentPerform would run only one iteration per core.
    let group = DispatchGroup()
    for _ in 0..<threads {
        group.enter()
        Thread {
            while now() < deadline {
                // A failure would end the run early and show as a low rate.
                _ = try? writer.append(payload, durability: .full)
            }
            group.leave()
        }.start()
    }
    group.wait()
    let statistics = writer.statistics
    let elapsed = now() - start
    return (Double(statistics.records) / elapsed, Double(statistics.records) / Double(max(statistics.syncs, 1)))
}

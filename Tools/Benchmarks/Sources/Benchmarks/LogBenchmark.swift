import Dispatch
import Foundation
import LensLog

/// Durable commits/s of LensDB's log against raw write+fdatasync loops on
/// the same disk, and group commit with 2–16 writers; all the loops take turns
/// in short windows (see `interleave`), so their ratios come from the same
/// spells of the machine.
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

    let rawAppend = try RawLog(path: nextPath(), frame: frame, preallocate: false)
    let rawPreallocated = try RawLog(path: nextPath(), frame: frame, preallocate: true)
    let lens = try lensWriter(path: nextPath(), preallocationChunk: 4 << 20)
    let lensNoPreallocation = try lensWriter(path: nextPath(), preallocationChunk: 0)
    // Several writer counts, each with its own log, show the shape of group
    // commit's cost: what a batch costs beyond a lone commit, and per writer.
    let writerCounts = [2, 4, 8, 16]
    let shared = try writerCounts.map { _ in try lensWriter(path: nextPath(), preallocationChunk: 4 << 20) }
    defer { for writer in [lens, lensNoPreallocation] + shared { writer.close() } }

    let results = try interleave([
        Contender(name: "raw append") { rawAppend.run(until: $0) },
        Contender(name: "raw preallocated") { rawPreallocated.run(until: $0) },
        Contender(name: "LensDB") { try appendLoop(lens, payload, until: $0) },
        Contender(name: "LensDB, no preallocation") { try appendLoop(lensNoPreallocation, payload, until: $0) },
    ] + zip(writerCounts, shared).map { threads, writer in
        Contender(name: "LensDB, \(threads) writers") { concurrentLoop(writer, payload, threads: threads, until: $0) }
    }, rounds: 10, window: 0.3)

    let bestRaw = { (round: Int) in max(results.roundRates[0][round], results.roundRates[1][round]) }
    let best = max(results.rate(0), results.rate(1))
    let labels = [
        "raw pwrite at end of a growing file + fdatasync", "raw pwrite into a preallocated file + fdatasync",
        "LensDB log, .full, preallocated extents", "LensDB log, .full, no preallocation",
    ]
    printTable(["loop (1 writer, \(frame)-byte records)", "commits/s", "vs best raw", "per round: median (min–max)"],
        labels.indices.map { index in
            [labels[index], format(results.rate(index)), percent(results.rate(index) / best),
             percentSpread(results.roundRatios(index, over: bestRaw))]
        })
    print("\npreallocated vs growing file: raw \(String(format: "%.2f", results.rate(1) / results.rate(0)))×, "
        + "LensDB \(String(format: "%.2f", results.rate(2) / results.rate(3)))×\n")

    // A batch's cycle (sync, gathering, waking the writers) against a lone
    // commit's shows what keeps full groups below their size in speed-up.
    let single = results.rate(2)
    var rows = [["1", format(single), "1.00×", "", "1.00", format(1e6 / single)]]
    for (offset, (threads, writer)) in zip(writerCounts, shared).enumerated() {
        let index = 4 + offset
        let statistics = writer.statistics
        let group = Double(statistics.records) / Double(max(statistics.batches, 1))
        rows.append(["\(threads)", format(results.rate(index)), String(format: "%.2f×", results.rate(index) / single),
                     timesSpread(results.roundRatios(index) { results.roundRates[2][$0] }),
                     String(format: "%.2f", group), format(1e6 * group / results.rate(index))])
    }
    printTable(["writers", "commits/s", "vs 1 writer", "per round: median (min–max)", "records per batch", "µs per batch"], rows)
}

/// The disk's own rate: pwrite one frame and fdatasync, in a loop, either
/// at the end of a growing file or over a posix_fallocate'd region.
private final class RawLog {
    let descriptor: Int32
    let bytes: [UInt8]
    let limit: off_t
    var offset: off_t = 0

    init(path: String, frame: Int, preallocate: Bool) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        bytes = [UInt8](repeating: 0x5A, count: frame)
        limit = preallocate ? 64 << 20 : .max
        if preallocate {
            let result = posix_fallocate(descriptor, 0, limit)
            guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        }
        // The allocation itself is metadata; the loop measures data syncs.
        _ = fsync(descriptor)
    }

    deinit { close(descriptor) }

    func run(until deadline: Double) -> Int {
        var count = 0
        while now() < deadline {
            if offset + off_t(bytes.count) > limit { offset = 0 }
            _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
            _ = fdatasync(descriptor)
            offset += off_t(bytes.count)
            count += 1
        }
        return count
    }
}

private func lensWriter(path: String, preallocationChunk: Int64) throws -> LogWriter {
    var options = LogWriterOptions()
    options.compression = false
    options.preallocationChunk = preallocationChunk
    return try LogWriter.create(fileSystem: POSIXFileSystem(), path: path, generation: 1, firstLSN: 1, options: options)
}

/// One writer appending `.full` until the deadline.
private func appendLoop(_ writer: LogWriter, _ payload: [UInt8], until deadline: Double) throws -> Int {
    var count = 0
    while now() < deadline {
        _ = try writer.append(payload, durability: .full)
        count += 1
    }
    return count
}

/// `threads` writers appending `.full` to one log until the deadline; returns
/// the records the log wrote meanwhile.
private func concurrentLoop(_ writer: LogWriter, _ payload: [UInt8], threads: Int, until deadline: Double) -> Int {
    let before = writer.statistics.records
    // Real threads: concurrentPerform would run only one iteration per core.
    let group = DispatchGroup()
    for _ in 0..<threads {
        group.enter()
        Thread {
            while now() < deadline {
                // A failure would end the window early and show as a low rate.
                _ = try? writer.append(payload, durability: .full)
            }
            group.leave()
        }.start()
    }
    group.wait()
    return writer.statistics.records - before
}

import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensLog

/// A simulated file whose sync can be held (before or after the simulated
/// fsync takes effect) and whose writes can be held, so a test can pin the
/// pipeline's interleavings. `syncFirst`: the simulated fsync runs at the
/// start of the call (it covers only what was written before it started, as
/// a real fsync may), then the call blocks; otherwise it blocks first.
///
/// `@unchecked Sendable`: every stored property is an immutable `let` of a
/// thread-safe type (the wrapped file, a `Locked`, semaphores), so sharing
/// one across threads cannot race.
final class GatedFile: StoredFile, @unchecked Sendable {
    let inner: any StoredFile
    var path: String { inner.path }
    let gates = Locked<(holdSync: Int?, holdWrite: Int?, syncs: Int, writes: Int, syncFirst: Bool)>((nil, nil, 0, 0, true))
    let syncEntered = DispatchSemaphore(value: 0)
    let syncRelease = DispatchSemaphore(value: 0)
    let writeEntered = DispatchSemaphore(value: 0)
    let writeRelease = DispatchSemaphore(value: 0)
    let extraSyncDelayMicros: UInt32

    init(_ inner: any StoredFile, extraSyncDelayMicros: UInt32 = 0) {
        self.inner = inner
        self.extraSyncDelayMicros = extraSyncDelayMicros
    }

    func read(at offset: Int64, count: Int) throws -> [UInt8] { try inner.read(at: offset, count: count) }
    func size() throws -> Int64 { try inner.size() }
    func truncate(to length: Int64) throws { try inner.truncate(to: length) }
    func preallocate(at offset: Int64, length: Int64) throws { try inner.preallocate(at: offset, length: length) }
    func startWriteback(at offset: Int64, length: Int64) throws { try inner.startWriteback(at: offset, length: length) }
    func close() { inner.close() }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let hold = gates.withLock { g -> Bool in g.writes += 1; return g.holdWrite == g.writes }
        if hold { writeEntered.signal(); writeRelease.wait() }
        try inner.write(bytes, at: offset)
    }

    func sync(_ need: SyncNeed) throws {
        let (hold, first) = gates.withLock { g -> (Bool, Bool) in g.syncs += 1; return (g.holdSync == g.syncs, g.syncFirst) }
        if hold && first {
            // fsync covers what was written when it started; the call returns later.
            defer { syncEntered.signal(); syncRelease.wait() }
            try inner.sync(need)
            return
        }
        if hold { syncEntered.signal(); syncRelease.wait() }
        try inner.sync(need)
        if extraSyncDelayMicros > 0 { usleep(extraSyncDelayMicros) }
    }
}

@Suite struct LogWriterPipelineTests {
    func makeWriter(_ fileSystem: SimulatedFileSystem, extraSyncDelayMicros: UInt32 = 0) throws -> (LogWriter, GatedFile) {
        let raw = try fileSystem.openFile(at: "/log", mode: .createNew)
        let header = LogFileHeader(generation: 1, firstLSN: 1)
        try raw.write(header.encoded(), at: 0)
        try raw.sync(.durable)
        try fileSystem.syncDirectory(at: "/")
        let file = GatedFile(raw, extraSyncDelayMicros: extraSyncDelayMicros)
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        options.preallocationChunk = 0
        return (LogWriter(file: file, path: "/log", header: header, options: options, predecessor: nil), file)
    }

    func records(_ bytes: [UInt8]) throws -> (records: [LogRecord], end: LogEnd?) {
        var reader = try LogReader(bytes: bytes, path: "/log", policy: .strict)
        var out: [LogRecord] = []
        while let record = try reader.next() { out.append(record) }
        return (out, reader.end)
    }

    func waitUntil(_ condition: () -> Bool) {
        for _ in 0..<2000 where !condition() { usleep(1000) }
    }

    /// Claim 1: a batch written while the previous sync is in flight claims
    /// only what was durable before that sync; losing the earlier batch and
    /// keeping the later one reads as a torn tail, not corruption.
    /// A sync expects company from the group the syncs before it served:
    /// `.full` commits, not records. Records nobody waited on are no group,
    /// so a lone committer after a burst of them syncs at once, without
    /// yielding the CPU at each of its next syncs to wait for others.
    @Test func recordsNobodyWaitedOnAreNoGroupForTheNextSync() throws {
        let fileSystem = SimulatedFileSystem()
        let (writer, _) = try makeWriter(fileSystem)
        func group() -> Int { writer.lock.withLock { writer.state.recentGroup } }
        for index in 0..<200 { try writer.append([UInt8(index)], durability: .none) }
        try writer.append([1], durability: .full)
        #expect(writer.durableLSN == 201)
        #expect(group() == 1)
        // Eight committers at once: a group as large as those that joined one sync.
        let done = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for index in 0..<8 {
            done.enter()
            Thread { start.wait(); _ = try? writer.append([UInt8(index)], durability: .full); done.leave() }.start()
        }
        for _ in 0..<8 { start.signal() }
        done.wait()
        #expect(writer.durableLSN == 209)
        #expect((1...8).contains(group()))
        writer.close()
    }

    @Test func batchWrittenDuringASyncVouchesOnlyForWhatWasDurableBefore() throws {
        let fileSystem = SimulatedFileSystem()
        let (writer, file) = try makeWriter(fileSystem)
        try writer.append(Array("zero".utf8), durability: .full)  // LSN 1, sync #1
        file.gates.withLock { $0.holdSync = 2 }
        let done = DispatchGroup()
        done.enter()
        Thread { _ = try? writer.append(Array(repeating: 0xA1, count: 700), durability: .full); done.leave() }.start()  // A: LSN 2
        file.syncEntered.wait()  // A's sync ran, its call has not returned
        done.enter()
        Thread { _ = try? writer.append(Array(repeating: 0xB2, count: 700), durability: .full); done.leave() }.start()  // B: LSN 3
        waitUntil { writer.statistics.batches == 3 }
        #expect(writer.durableLSN == 1)
        let current = fileSystem.contents(of: "/log")!
        let (read, _) = try records(current)
        #expect(read.map(\.lsn) == [1, 2, 3])
        #expect(read.map(\.syncedLSN) == [0, 1, 1], "B must not vouch for A before A's sync returned")
        // Power cut that keeps B's sectors and loses A's: a torn tail.
        var damaged = current
        let a = read[1]
        for index in Int(a.offset)..<Int(a.offset) + a.frameSize { damaged[index] = 0 }
        let (kept, end) = try records(damaged)
        #expect(kept.map(\.lsn) == [1])
        guard case .tornTail? = end else { Issue.record("expected a torn tail, got \(String(describing: end))"); return }
        file.syncRelease.signal()
        done.wait()
        #expect(writer.durableLSN == 3)
        writer.close()
    }

    /// Claim 2: A's sync fails while B is already written: both fail, the file
    /// is cut back to A, and no sync is ever issued again.
    @Test func syncFailingAfterTheNextBatchWasWrittenFailsBothAndCutsBackToTheFirst() throws {
        let fileSystem = SimulatedFileSystem()
        let (writer, file) = try makeWriter(fileSystem)
        try writer.append(Array("zero".utf8), durability: .full)
        let endBefore = writer.endOffset
        file.gates.withLock { $0.holdSync = 2; $0.syncFirst = false }
        let errors = Locked<[UInt64: String]>([:])
        let done = DispatchGroup()
        for (index, fill) in [(0, UInt8(0xA1)), (1, UInt8(0xB2))] {
            if index == 1 { file.syncEntered.wait() }
            done.enter()
            Thread {
                do { try writer.append(Array(repeating: fill, count: 700), durability: .full) } catch {
                    errors.withLock { $0[UInt64(index + 2)] = "\(error)" }
                }
                done.leave()
            }.start()
        }
        waitUntil { writer.statistics.batches == 3 }
        let syncsBefore = fileSystem.callCount(.sync)
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync]))
        file.syncRelease.signal()
        done.wait()
        #expect(errors.withLock { $0.count } == 2)
        #expect(Int64(fileSystem.contents(of: "/log")!.count) == endBefore, "cut back to the first unacknowledged batch")
        #expect(throws: LogError.self) { try writer.append([1], durability: .full) }
        #expect(throws: LogError.self) { try writer.flush() }
        #expect(fileSystem.callCount(.sync) == syncsBefore + 1, "a failed fsync is never retried")
        writer.close()
    }

    /// Claim 2, the other order: A's sync fails while B's write is still in
    /// flight; B lands after the cut and is cut again.
    @Test func syncFailingWhileTheNextWriteIsInFlightCutsThatWriteToo() throws {
        let fileSystem = SimulatedFileSystem()
        let (writer, file) = try makeWriter(fileSystem)
        try writer.append(Array("zero".utf8), durability: .full)  // write #1, sync #1
        let endBefore = writer.endOffset
        file.gates.withLock { $0.holdSync = 2; $0.syncFirst = false; $0.holdWrite = 3 }
        let failures = Locked(0)
        let done = DispatchGroup()
        done.enter()
        Thread { if (try? writer.append(Array(repeating: 0xA1, count: 700), durability: .full)) == nil { failures.withLock { $0 += 1 } }; done.leave() }.start()
        file.syncEntered.wait()
        done.enter()
        Thread { if (try? writer.append(Array(repeating: 0xB2, count: 700), durability: .buffered)) == nil { failures.withLock { $0 += 1 } }; done.leave() }.start()
        file.writeEntered.wait()  // B's write is in flight
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync]))
        file.syncRelease.signal()
        waitUntil { writer.failure != nil }
        file.writeRelease.signal()
        done.wait()
        #expect(failures.withLock { $0 } == 2)
        #expect(Int64(fileSystem.contents(of: "/log")!.count) == endBefore)
        writer.close()
    }

    /// Claim 3: a log swap while the old log's sync is in flight. The new
    /// log's records vouch only for what the old log had synced, and its
    /// first `.full` commit waits for the old log's sync.
    @Test func swapWhileTheOldLogSyncsVouchesOnlyForItsSyncedPrefix() throws {
        let fileSystem = SimulatedFileSystem()
        let (old, file) = try makeWriter(fileSystem)
        try old.append(Array("zero".utf8), durability: .full)
        file.gates.withLock { $0.holdSync = 2 }
        let done = DispatchGroup()
        done.enter()
        Thread { _ = try? old.append(Array(repeating: 0xA1, count: 300), durability: .full); done.leave() }.start()  // LSN 2
        file.syncEntered.wait()
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        let prepared = try PreparedLog(fileSystem: fileSystem, path: "/log2", generation: 2, options: options)
        let new = try prepared.start(firstLSN: 3, predecessor: old)
        let acknowledged = Locked(false)
        done.enter()
        Thread { if (try? new.append(Array(repeating: 0xB2, count: 300), durability: .full)) != nil { acknowledged.withLock { $0 = true } }; done.leave() }.start()
        waitUntil { new.statistics.batches == 1 }
        usleep(50_000)
        #expect(!acknowledged.withLock { $0 }, "acknowledged before the old log's sync returned")
        let (read, _) = try records(fileSystem.contents(of: "/log2")!)
        #expect(read.map(\.syncedLSN) == [1])
        file.syncRelease.signal()
        done.wait()
        #expect(acknowledged.withLock { $0 })
        #expect(new.durableLSN == 3)
        new.close()
        old.close()
    }

    /// close() while a `.full` commit's sync is in flight: a sync that
    /// succeeds still acknowledges the commit (it is durable), and one that
    /// fails still poisons the writer and cuts the file back, as it would
    /// without the close.
    @Test func closeDuringAnInFlightSync() throws {
        for failing in [false, true] {
            let fileSystem = SimulatedFileSystem()
            let (writer, file) = try makeWriter(fileSystem)
            try writer.append(Array("zero".utf8), durability: .full)
            let endBefore = writer.endOffset
            file.gates.withLock { $0.holdSync = 2; $0.syncFirst = false }
            let result = Locked<String>("")
            let done = DispatchGroup()
            done.enter()
            Thread {
                do { try writer.append(Array(repeating: 0xA1, count: 300), durability: .full); result.withLock { $0 = "ok" } }
                catch { result.withLock { $0 = "\(error)" } }
                done.leave()
            }.start()
            file.syncEntered.wait()
            if failing { fileSystem.injectFault(Fault(.failedSync, operations: [.sync])) }
            let closer = DispatchGroup()
            closer.enter()
            Thread { writer.close(); closer.leave() }.start()
            waitUntil { writer.failure != nil }
            file.syncRelease.signal()
            done.wait()
            closer.wait()
            let size = Int64(fileSystem.contents(of: "/log")!.count)
            if !failing { #expect(result.withLock { $0 } == "ok", "a commit whose sync succeeded is told it failed") }
            if failing { #expect(size == endBefore, "a failed sync during close() is not cut back") }
        }
    }

    /// Many committers, mixed durability, slow syncs that cover only what was
    /// written when they started; power cut at a random point; crash. Every
    /// acknowledged `.full` commit survives, the log reads strictly (no
    /// corruption verdict), and nothing hangs.
    @Test func slowSyncsPowerCutAndCrashLoseNothingAcknowledged() throws {
        var random = SeededGenerator.fromEnvironment(default: 77)
        for trial in 0..<300 {
            let fileSystem = SimulatedFileSystem()
            let (writer, _) = try makeWriter(fileSystem, extraSyncDelayMicros: UInt32(random.next() % 300))
            fileSystem.powerCut(afterMutatingCalls: Int(random.next() % 150))
            let durable = Locked<UInt64>(0)
            let queued = Locked<[UInt64: [UInt8]]>([:])
            let seed = random.next()
            runConcurrently(threads: 6) { thread in
                var local = SeededGenerator(seed: seed &+ UInt64(thread))
                for index in 0..<30 {
                    let payload = Array("t\(thread)#\(index)".utf8) + [UInt8](repeating: UInt8(index), count: Int(local.next() % 900))
                    let durability: Durability = local.next() % 3 == 0 ? .buffered : .full
                    guard let lsn = try? writer.enqueue(payload) else { return }
                    queued.withLock { $0[lsn] = payload }
                    guard (try? writer.wait(for: lsn, durability: durability)) != nil else { return }
                    if durability == .full { durable.withLock { $0 = max($0, lsn) } }
                }
            }
            writer.close()
            fileSystem.crash(seed: random.next(), model: [CrashModel.default, .tearAll][trial % 2])
            var reader = try LogReader(fileSystem: fileSystem, path: "/log", policy: .strict)
            var expected: UInt64 = 1
            do {
                while let record = try reader.next() {
                    #expect(record.payload == queued.withLock { $0[record.lsn] }, "trial \(trial)")
                    expected += 1
                }
            } catch {
                Issue.record("trial \(trial): strict read failed: \(error)")
            }
            #expect(expected - 1 >= durable.withLock { $0 }, "trial \(trial): acknowledged \(durable.withLock { $0 }) lost")
        }
    }
}

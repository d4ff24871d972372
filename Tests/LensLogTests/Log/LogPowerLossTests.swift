import Dispatch
import LensTestSupport
import Testing
@testable import LensLog

/// Concurrent committers on the simulated file system, a power cut at a
/// random point, a crash, and a read of what is left (promises 1 and 2 at the
/// log level).
@Suite struct LogPowerLossTests {
    struct Outcome {
        /// LSN → payload of every record a committer queued.
        var queued: [UInt64: [UInt8]] = [:]
        /// The highest LSN acknowledged by a `.full` commit.
        var durable: UInt64 = 0
    }

    /// Four threads commit until the power goes; returns what they saw.
    func run(cut: Int, on fileSystem: SimulatedFileSystem, random: inout SeededGenerator) throws -> Outcome {
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        options.preallocationChunk = [0, 4096][Int(random.next() % 2)]
        let writer = try LogWriter.create(fileSystem: fileSystem, path: "/log", generation: 1, firstLSN: 1, options: options)
        fileSystem.powerCut(afterMutatingCalls: cut)
        let outcome = Locked(Outcome())
        let seed = random.next()
        runConcurrently(threads: 4) { thread in
            var local = SeededGenerator(seed: seed &+ UInt64(thread))
            for index in 0..<40 {
                let payload = Array("t\(thread) #\(index) ".utf8) + [UInt8](repeating: UInt8(index), count: Int(local.next() % 700))
                let durability: Durability = local.next() % 3 == 0 ? .buffered : .full
                guard let lsn = try? writer.enqueue(payload) else { return }
                outcome.withLock { $0.queued[lsn] = payload }
                // A failed commit ends this committer: the log is poisoned.
                guard (try? writer.wait(for: lsn, durability: durability)) != nil else { return }
                if durability == .full { outcome.withLock { $0.durable = max($0.durable, lsn) } }
            }
        }
        writer.close()
        return outcome.withLock { $0 }
    }

    @Test func crashAtRandomPointsLeavesAPrefixHoldingEveryDurableCommit() throws {
        var random = SeededGenerator.fromEnvironment(default: 2026)
        var crashes = 0
        for trial in 0..<1500 {
            let fileSystem = SimulatedFileSystem()
            let outcome = try run(cut: Int(random.next() % 120), on: fileSystem, random: &random)
            fileSystem.crash(seed: random.next(), model: [CrashModel.default, .tearAll, .keepAll][trial % 3])
            crashes += 1
            var reader = try LogReader(fileSystem: fileSystem, path: "/log", policy: .strict)
            var expected: UInt64 = 1
            while let record = try reader.next() {
                #expect(record.lsn == expected, "trial \(trial)")
                #expect(record.payload == outcome.queued[record.lsn], "trial \(trial): LSN \(record.lsn) is not what was written")
                expected += 1
            }
            #expect(expected - 1 >= outcome.durable, "trial \(trial): acknowledged LSN \(outcome.durable) lost, read up to \(expected - 1)")
        }
        print("log crash points: \(crashes)")
    }

    @Test(arguments: [Fault.Effect.noSpace, .ioError, .shortWrite(keepingBytes: 30), .failedSync])
    func ioErrorFailsPendingCommitsPoisonsTheWriterAndLosesNothingAcknowledged(effect: Fault.Effect) throws {
        for nth in 1...3 {
            let fileSystem = SimulatedFileSystem()
            let writer = try LogWriter.create(fileSystem: fileSystem, path: "/log", generation: 1, firstLSN: 1)
            try writer.append(Array("before".utf8), durability: .full)
            fileSystem.injectFault(Fault(effect, operations: effect == .failedSync ? [.sync] : [.write], trigger: .nthCall(nth)))
            var acknowledged: [UInt64] = [1]
            var failure: LogError?
            for index in 0..<6 {
                do {
                    acknowledged.append(try writer.append(Array("record \(index)".utf8), durability: .full))
                } catch {
                    failure = error
                    break
                }
            }
            guard case .writerFailed? = failure else { Issue.record("\(effect) #\(nth): no failure"); continue }
            #expect(throws: LogError.self) { try writer.append([1], durability: .buffered) }
            #expect(throws: LogError.self) { try writer.flush() }
            fileSystem.clearFaults()
            fileSystem.crash(seed: UInt64(nth), model: .default)
            var reader = try LogReader(fileSystem: fileSystem, path: "/log", policy: .strict)
            var read: [UInt64] = []
            while let record = try reader.next() { read.append(record.lsn) }
            #expect(Array(read.prefix(acknowledged.count)) == acknowledged, "\(effect) #\(nth)")
        }
    }
}

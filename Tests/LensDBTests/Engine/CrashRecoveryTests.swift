import LensTestSupport
import Testing
@testable import LensDB

/// The short, default-suite run of the crash fuzzer (Fuzz/CrashFuzz runs it long).
@Suite struct CrashRecoveryTests {
    @Test func powerCutAtEveryMutatingCallRecoversAPrefixHoldingEveryDurableCommit() throws {
        var random = SeededGenerator.fromEnvironment(default: 20_261_122)
        var points = 0
        for _ in 0..<6 {
            let workload = CrashWorkload(seed: random.next(), steps: 24)
            let calls = CrashCheck.mutatingCalls(of: workload)
            for cut in 0...calls {
                for model in [CrashModel.default, .tearAll] {
                    points += 1
                    if let violation = CrashCheck.check(workload, cutPoint: cut, crashSeed: random.next(), model: model) {
                        Issue.record("\(violation)")
                        return
                    }
                }
            }
        }
        print("crash points tested: \(points)")
        #expect(points > 500)
    }

    @Test func injectedIOErrorsFailTheCommitAndLoseNothingAcknowledged() throws {
        var random = SeededGenerator.fromEnvironment(default: 6)
        let workload = CrashWorkload(seed: random.next(), steps: 24)
        let effects: [Fault.Effect] = [.noSpace, .ioError, .shortWrite(keepingBytes: 10), .failedSync]
        for effect in effects {
            for operation: StorageError.Operation in [.write, .sync, .rename, .syncDirectory, .preallocate] {
                for nth in 1...6 {
                    let fault = Fault(effect, operations: [operation], trigger: .nthCall(nth))
                    if let violation = CrashCheck.check(workload, cutPoint: -1, crashSeed: random.next(), fault: fault) {
                        Issue.record("\(effect) on \(operation) #\(nth): \(violation)")
                        return
                    }
                }
            }
        }
    }

    /// Cuts the power at every mutating call of `workload`, under each
    /// crash model, and records the first violation.
    static func cutAtEveryCall(_ workload: CrashWorkload) {
        for cut in 0...CrashCheck.mutatingCalls(of: workload) {
            for model in [CrashModel.keepAll, .dropAll, .tearAll, .default] {
                if let violation = CrashCheck.check(workload, cutPoint: cut, crashSeed: UInt64(cut), model: model) {
                    Issue.record("\(violation)")
                    return
                }
            }
        }
    }

    /// Promise 4, step by step: a power cut at every call of a compaction —
    /// snapshot write, sync, rename, directory sync, deletions — with unsynced
    /// data all kept, all dropped, or torn (the ALICE cases: a rename that
    /// reaches the disk before the data, a directory change never synced).
    @Test func compactionCutAtEveryStepOpensTheOldOrTheNewStateLosingNothing() throws {
        let put = { (key: String, value: String) in
            ModelOperation.put(table: "t", key: Array(key.utf8), value: Array(value.utf8))
        }
        var steps: [CrashStep] = (0..<6).map { .write([put("k\($0)", String(repeating: "v", count: 300))], .full) }
        steps += [.compact, .write([put("after", "compaction")], .full), .compact]
        let workload = CrashWorkload(seed: 4, steps: steps)
        Self.cutAtEveryCall(workload)
    }

    /// A clean close and a reopen between commits, cut at every call: the
    /// close's marker (written unsynced), the open that reads and removes
    /// it, and the commits after. A `.strict` open after any crash must show
    /// a prefix holding every durable commit, never a false alarm.
    @Test func closeAndReopenCutAtEveryStepOpensStrictWithEveryDurableCommit() throws {
        let put = { (key: String, durability: Durability) in
            CrashStep.write([.put(table: "t", key: Array(key.utf8), value: Array(repeating: 7, count: 200))], durability)
        }
        let steps: [CrashStep] = [put("a", .full), put("b", .buffered), .reopen, put("c", .buffered), put("d", .full),
                                  .compact, put("e", .buffered), .reopen, .reopen, put("f", .full)]
        let workload = CrashWorkload(seed: 5, steps: steps)
        Self.cutAtEveryCall(workload)
    }

    /// Recovery itself loses power: after a crash that kept unsynced commits,
    /// the next open must log them again, and a power cut at any of that
    /// open's calls, under any crash model, must leave them all there for the
    /// open after it. A re-log that could appear half written would hide them.
    @Test func powerCutAtEveryCallOfTheReloggingOpenKeepsEveryRecord() throws {
        let path = CrashCheck.storePath
        func prepared() throws -> SimulatedFileSystem {
            let fileSystem = SimulatedFileSystem()
            let store = try Store(at: path, options: CrashCheck.options(fileSystem))
            for index in 0..<6 {
                try store.write(durability: index < 2 ? .full : .buffered) { tx in
                    tx.put(Array(repeating: UInt8(index), count: 300), for: [UInt8(index)], in: "t")
                }
            }
            fileSystem.powerCut(afterMutatingCalls: 0)
            store.close()
            fileSystem.crash(seed: 1, model: .keepAll)
            return fileSystem
        }
        let reference = try prepared()
        let before = reference.mutatingCallCount
        let expected = try Store(at: path, options: CrashCheck.options(reference)).current.everything()
        let openCalls = reference.mutatingCallCount - before
        #expect(openCalls >= 5, "the open should re-log: create, write, sync, rename, sync the directory")
        for cut in 0..<openCalls {
            for (index, model) in [CrashModel.keepAll, .dropAll, .tearAll, .default].enumerated() {
                let fileSystem = try prepared()
                CrashCheck.cutPowerDuringOpen(afterMutatingCalls: cut, fileSystem)
                fileSystem.crash(seed: UInt64(cut * 4 + index), model: model)
                let store = try Store(at: path, options: CrashCheck.options(fileSystem))
                #expect(try store.current.everything() == expected, "cut after \(cut) calls of the open, crash model \(index)")
            }
        }
    }
}

import LensTestSupport
import Testing
@testable import LensDB

/// The short, default-suite run of the crash fuzzer over encrypted stores
/// whose key changes among the steps (`CrashFuzz --encryption rotating`
/// runs it long).
@Suite struct EncryptedCrashTests {
    @Test func powerCutAtEveryCallOfEncryptedWorkloadsWithKeyChangesRecoversUnderOneKey() throws {
        var random = SeededGenerator.fromEnvironment(default: 20_261_123)
        var points = 0, keyChanges = 0
        for _ in 0..<4 {
            let workload = CrashWorkload(seed: random.next(), steps: 20, encryption: .rotating)
            keyChanges += workload.steps.filter { if case .changeKey = $0 { true } else { false } }.count
            for cut in 0...CrashCheck.mutatingCalls(of: workload) {
                for model in [CrashModel.default, .tearAll] {
                    points += 1
                    if let violation = CrashCheck.check(workload, cutPoint: cut, crashSeed: random.next(), model: model) {
                        Issue.record("\(violation)")
                        return
                    }
                }
            }
        }
        print("encrypted crash points tested: \(points), key changes: \(keyChanges)")
        #expect(points > 300)
        #expect(keyChanges > 0, "no workload changed its key")
    }

    @Test func injectedIOErrorsInEncryptedWorkloadsLoseNothingAcknowledged() throws {
        var random = SeededGenerator.fromEnvironment(default: 7)
        let workload = CrashWorkload(seed: random.next(), steps: 20, encryption: .rotating)
        for effect: Fault.Effect in [.ioError, .failedSync] {
            for operation: StorageError.Operation in [.write, .sync, .rename, .syncDirectory] {
                for nth in 1...5 {
                    let fault = Fault(effect, operations: [operation], trigger: .nthCall(nth))
                    if let violation = CrashCheck.check(workload, cutPoint: -1, crashSeed: random.next(), fault: fault) {
                        Issue.record("\(effect) on \(operation) #\(nth): \(violation)")
                        return
                    }
                }
            }
        }
    }

    /// Found by CrashFuzz: a key change of a store whose only log was
    /// empty, its header not yet synced (a compaction swapped it in and
    /// stopped before its snapshot), left after a crash in its snapshot step
    /// only the new key's snapshot, without its log: no key opened the
    /// store. The key change now syncs the old log, header included, first.
    @Test func keyChangeOverAnEmptyUnsyncedLogCutAtEveryCallLeavesAnOpenableStore() throws {
        let put: [ModelOperation] = [.put(table: "t", key: [1], value: Array("after".utf8))]
        let workloads = [
            CrashWorkload(seed: 1, steps: [.beginCompaction, .changeKey(nil), .write(put, .full)], initialKey: 0),
            CrashWorkload(seed: 2, steps: [.changeKey(1), .write(put, .full), .changeKey(2)], initialKey: 0),
            CrashWorkload(seed: 3, steps: [.write(put, .buffered), .beginCompaction, .changeKey(0), .flush], initialKey: nil),
        ]
        for workload in workloads {
            for cut in 0...CrashCheck.mutatingCalls(of: workload) {
                for model in [CrashModel.keepAll, .dropAll, .tearAll, .default] {
                    if let violation = CrashCheck.check(workload, cutPoint: cut, crashSeed: UInt64(cut), model: model) {
                        Issue.record("\(violation)")
                        return
                    }
                }
            }
        }
    }
}

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
}

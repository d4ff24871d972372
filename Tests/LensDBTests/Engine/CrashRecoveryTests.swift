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
}

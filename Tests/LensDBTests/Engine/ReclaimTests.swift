import Dispatch
import Testing
@testable import LensDB

/// A large commit leaves what it replaced (the old version, and the
/// operations of a record made ahead) to the reclaimer's thread: freeing
/// them is not the committer's wait.
@Suite struct ReclaimTests {
    /// Something whose freeing waits until the test opens a gate, and says
    /// whether the gate was open by then: freed on the thread that reclaims
    /// it, it would wait out its timeout there, before `reclaim` returned.
    final class Gated: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let freed = DispatchSemaphore(value: 0)
        let openWhenFreed = Locked<Bool?>(nil)

        deinit {
            let open = gate.wait(timeout: .now() + 2) == .success
            openWhenFreed.withLock { $0 = open }
            freed.signal()
        }
    }

    /// Holds a `Gated` without owning its gates, so the test keeps them.
    struct Held: Sendable {
        var gated: Gated?
    }

    @Test func aReclaimedValueIsFreedOnAnotherThreadAndLeavesItsEmptyInPlace() {
        var gated: Gated? = Gated()
        let (gate, freed, openWhenFreed) = (gated!.gate, gated!.freed, gated!.openWhenFreed)
        var held = Held(gated: gated)
        gated = nil
        Store.reclaim(&held, leaving: Held(gated: nil))
        #expect(held.gated == nil, "the value's place holds the empty one")
        #expect(openWhenFreed.withLock { $0 } == nil, "not freed before reclaim returned")
        gate.signal()
        #expect(freed.wait(timeout: .now() + 10) == .success, "freed once the reclaimer runs")
        #expect(openWhenFreed.withLock { $0 } == true, "freed after reclaim returned, not inside it")
    }
}

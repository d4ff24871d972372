import Dispatch
import Testing
@testable import LensDB

/// `Store.reclaim` frees what it is given on the reclaimer's thread, after
/// it returns: how a large commit leaves the version it replaced (and the
/// operations of a record made ahead) off the committer's path.
@Suite struct ReclaimTests {
    /// Something whose freeing waits until the test opens a gate, and says
    /// whether the gate was open by then. Freed inside `reclaim`, on the
    /// caller's thread, it would wait out its timeout there, before
    /// `reclaim` returned and the test opened the gate; the timeout only
    /// bounds how long such a failure hangs.
    final class Gated: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let freed = DispatchSemaphore(value: 0)
        let openWhenFreed = Locked<Bool?>(nil)

        deinit {
            let open = gate.wait(timeout: .now() + 60) == .success
            openWhenFreed.withLock { $0 = open }
            freed.signal()
        }
    }

    @Test func aReclaimedValueIsFreedOnAnotherThreadAndLeavesItsEmptyInPlace() {
        var gated: Gated? = Gated()
        let (gate, freed, openWhenFreed) = (gated!.gate, gated!.freed, gated!.openWhenFreed)
        Store.reclaim(&gated, leaving: nil)
        #expect(gated == nil, "the value's place holds the empty one")
        #expect(openWhenFreed.withLock { $0 } == nil, "not freed before reclaim returned")
        gate.signal()
        #expect(freed.wait(timeout: .now() + 60) == .success, "freed once the reclaimer runs")
        #expect(openWhenFreed.withLock { $0 } == true, "freed after reclaim returned, not inside it")
    }
}

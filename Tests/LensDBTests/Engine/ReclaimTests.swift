import Dispatch
import Testing
@testable import LensDB

/// A `Reclaimer` frees what it is given on its own thread, after `reclaim`
/// returns: how a large commit leaves the version it replaced (and the
/// operations of a record made ahead) off the committer's path; past
/// `waitingAtMost` values waiting there, on the caller's. Each test has a
/// reclaimer of its own: the store's is shared by every store the suite
/// runs at the same time.
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
        let reclaimer = Reclaimer(label: "test", waitingAtMost: 4)
        var gated: Gated? = Gated()
        let (gate, freed, openWhenFreed) = (gated!.gate, gated!.freed, gated!.openWhenFreed)
        reclaimer.reclaim(&gated, leaving: nil)
        #expect(gated == nil, "the value's place holds the empty one")
        #expect(openWhenFreed.withLock { $0 } == nil, "not freed before reclaim returned")
        gate.signal()
        #expect(freed.wait(timeout: .now() + 60) == .success, "freed once the reclaimer runs")
        #expect(openWhenFreed.withLock { $0 } == true, "freed after reclaim returned, not inside it")
    }

    /// Whether it has been freed.
    final class Watched: Sendable {
        let freed: Locked<Bool>
        init(_ freed: Locked<Bool>) { self.freed = freed }
        deinit { freed.withLock { $0 = true } }
    }

    @Test func pastTheLimitOfWaitingValuesAReclaimFreesInPlace() {
        let reclaimer = Reclaimer(label: "test", waitingAtMost: 4)
        // The first value holds the reclaimer's thread until the gate
        // opens, so the ones after it wait, up to the limit.
        var holder: Gated? = Gated()
        let (gate, holderFreed) = (holder!.gate, holder!.freed)
        reclaimer.reclaim(&holder, leaving: nil)
        let waitingFreed = (1..<reclaimer.waitingAtMost).map { _ in
            let freed = Locked(false)
            var waiting: Watched? = Watched(freed)
            reclaimer.reclaim(&waiting, leaving: nil)
            return freed
        }
        let overFreed = Locked(false)
        var over: Watched? = Watched(overFreed)
        reclaimer.reclaim(&over, leaving: nil)
        #expect(over == nil, "the value's place holds the empty one")
        #expect(overFreed.withLock { $0 }, "past the limit, freed before reclaim returned")
        #expect(waitingFreed.allSatisfy { !$0.withLock { $0 } }, "the ones within the limit wait for the reclaimer")
        gate.signal()
        #expect(holderFreed.wait(timeout: .now() + 60) == .success)
        // The reclaimer frees the rest in order, then takes values again.
        let after = DispatchSemaphore(value: 0)
        reclaimer.afterWaiting { after.signal() }
        #expect(after.wait(timeout: .now() + 60) == .success)
        #expect(waitingFreed.allSatisfy { $0.withLock { $0 } }, "freed once the reclaimer ran")
        // Each value freed there made room: the next one waits for the
        // reclaimer again, and is freed after reclaim returned.
        var again: Gated? = Gated()
        let (againGate, againFreed, againOpen) = (again!.gate, again!.freed, again!.openWhenFreed)
        reclaimer.reclaim(&again, leaving: nil)
        againGate.signal()
        #expect(againFreed.wait(timeout: .now() + 60) == .success)
        #expect(againOpen.withLock { $0 } == true, "queued again, not freed in place")
    }
}

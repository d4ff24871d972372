import Foundation
import LensLog
import Testing
@testable import LensDB

/// A batch put takes its encodings from a `MadeInOrder`, made on another
/// thread while it stages them, or by the put itself where no thread has
/// begun them. Whichever thread makes a chunk, the caller must get each
/// result once, in order, made once, and nothing may outlive the maker.
@Suite struct MadeInOrderTests {
    /// A result that counts the live ones.
    final class Made: Sendable {
        let index: Int
        let live: Locked<Int>
        init(_ index: Int, live: Locked<Int>) {
            self.index = index
            self.live = live
            live.withLock { $0 += 1 }
        }
        deinit { live.withLock { $0 -= 1 } }
    }

    /// Every result, for chunks of one entry up to more than all, with a
    /// caller quicker than the maker and one slower: each is taken in
    /// order, and each index is made exactly once, by whichever thread.
    @Test(arguments: [1, 3, 64, 5_000])
    func everyResultComesOnceInOrderMadeOnce(chunk: Int) throws {
        let count = 2_000
        for callerIsSlow in [false, true] {
            let live = Locked(0)
            let calls = Locked([Int](repeating: 0, count: count))
            do {
                let made = MadeInOrder(count: count, chunk: chunk) { index in
                    calls.withLock { $0[index] += 1 }
                    return Made(index, live: live)
                }
                for index in 0..<count {
                    let result = made.take(index)
                    #expect(result.index == index, "chunk \(chunk)")
                    if callerIsSlow, index % 100 == 0 { Thread.sleep(forTimeInterval: 0.001) }
                }
            }
            #expect(calls.withLock { $0 }.allSatisfy { $0 == 1 }, "chunk \(chunk), caller slow: \(callerIsSlow)")
            try waitUntil("every result freed, chunk \(chunk)") { live.withLock { $0 } == 0 }
        }
    }

    /// A caller that stops part way (a batch put that throws) takes what it
    /// took; the maker claims nothing more, and every result made, taken or
    /// not, is freed once the maker is done.
    @Test func aStoppedMakerFreesWhatItMade() throws {
        let live = Locked(0)
        let calls = Locked(0)
        do {
            // Slow past the first two chunks: without the stop, the maker
            // would go on for 20 s.
            let made = MadeInOrder(count: 100_000, chunk: 64) { index in
                calls.withLock { $0 += 1 }
                if index >= 128 { Thread.sleep(forTimeInterval: 0.0002) }
                return Made(index, live: live)
            }
            for index in 0..<100 { #expect(made.take(index).index == index) }
            made.stop()
        }
        try waitUntil("every result freed") { live.withLock { $0 } == 0 }
        // The two chunks taken and the one the maker had begun, with room
        // for a caller held up between its last take and its stop.
        #expect(calls.withLock { $0 } <= 20 * 64, "made \(calls.withLock { $0 }) of 100,000 after a stop at 100")
    }

    private func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("not within 10 s: \(what)")
                return
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }
}

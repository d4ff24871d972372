import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensDB

/// `Store.close()` as an app's lifecycle handler calls it: from any thread,
/// perhaps twice, while commits are still arriving.
@Suite struct StoreCloseTests {
    func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.log.backgroundSyncInterval = nil
        options.compactionLogRatio = nil
        return options
    }

    @Test func aCloseThatFindsAnotherRunningReturnsOnlyOnceTheLockIsReleased() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: "s/store", options: options(fileSystem))
        try store.write(durability: .buffered) { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        // Hold the first close inside its final sync until the second has been called.
        let inSync = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let held = Locked(false)
        fileSystem.observeCalls { operation, path in
            guard operation == .sync, path.hasSuffix(".log"), held.withLock({ let first = !$0; $0 = true; return first }) else { return }
            inSync.signal()
            release.wait()
        }
        // Threads, not Dispatch: on two cores the global queue may not start
        // another worker for a second while one is blocked here.
        let firstDone = DispatchSemaphore(value: 0)
        Thread {
            store.close()
            firstDone.signal()
        }.start()
        inSync.wait()
        Thread {
            usleep(50_000)
            release.signal()
        }.start()
        store.close()
        #expect(throws: Never.self, "the second close returned while the store was still locked") {
            try fileSystem.lockFile(at: "s/store/LOCK").unlock()
        }
        #expect(fileSystem.fileExists(at: "s/store/CLOSED"), "the close that returned had not finished")
        firstDone.wait()
    }

    /// `.buffered` commits too: close flushes every commit staged before it.
    @Test func commitsRacingWithCloseEitherSurviveAPowerCutOrThrowClosed() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: "s/store", options: options(fileSystem))
        let acknowledged = Locked<[String]>([])
        let writersDone = Locked(0)
        runConcurrently(threads: 5) { thread in
            if thread == 0 {
                // Close in the middle of the stream of commits, twice.
                while acknowledged.withLock({ $0.count }) < 40 && writersDone.withLock({ $0 }) < 4 { sched_yield() }
                store.close()
                store.close()
                return
            }
            defer { writersDone.withLock { $0 += 1 } }
            for index in 0..<1000 {
                let key = "\(thread)-\(index)"
                do {
                    try store.write(durability: index % 5 == 0 ? .full : .buffered) { tx in
                        tx.put(bytes(key), for: bytes(key), in: "t")
                    }
                    acknowledged.withLock { $0.append(key) }
                } catch StoreError.closed {
                    return
                } catch {
                    Issue.record("a commit racing with close failed otherwise: \(error)")
                    return
                }
            }
        }
        #expect(acknowledged.withLock { $0.count } < 4000, "close ended no writer's stream")
        fileSystem.crash(seed: 1, model: .dropAll)
        let reopened = try Store(at: "s/store", options: options(fileSystem))
        for key in acknowledged.withLock({ $0 }) {
            #expect(reopened.current.value(in: "t", key: bytes(key)) != nil, "acknowledged \(key) lost")
        }
    }
}

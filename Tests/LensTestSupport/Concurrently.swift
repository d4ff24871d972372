import Foundation

/// Runs `body(index)` on `threads` threads at once and returns when all are done.
///
/// Unlike `DispatchQueue.concurrentPerform`, which runs only as many
/// iterations at a time as there are cores, every thread here is live at the
/// same time: what group commit and lock contention need to be exercised.
public func runConcurrently(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<threads {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

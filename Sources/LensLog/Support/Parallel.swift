import Dispatch
import Foundation

/// Work an open splits across the machine's cores: reading a snapshot's
/// chunks, decoding a large table and building its indexes, which read
/// shared bytes or rows and write nothing shared. Public for LensDB, which
/// shares it; not meant for programs.
public enum Parallel {
    /// How many threads a split uses at most: the cores the process may run on.
    public static let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// The fewest items worth a thread of their own: below, starting
    /// threads costs more than it saves. Tuning only: opening 10k people
    /// took 1.95 µs per person with 16,384 (one thread), 1.38 with 4,096.
    public static let itemsPerThread = 4_096

    /// `body(0) … body(count - 1)`, run on up to ``threads`` threads at once
    /// and returned in order. `body` must be safe to call from several
    /// threads at once; the call returns when every part has.
    public static func map<Result: Sendable>(_ count: Int, _ body: @Sendable (Int) -> Result) -> [Result] {
        guard count > 1, threads > 1 else { return (0..<count).map(body) }
        let slots = Slots<Result>(count)
        DispatchQueue.concurrentPerform(iterations: count) { part in slots.set(part, body(part)) }
        return slots.results
    }

    /// One result slot per part of a ``map(_:_:)``.
    ///
    /// `@unchecked Sendable`: every part writes its own slot alone, once,
    /// and the slots are read only after `concurrentPerform` returned,
    /// which happens after every part has run. No slot is ever touched by
    /// two threads without that ordering between them.
    private final class Slots<Result: Sendable>: @unchecked Sendable {
        private let storage: UnsafeMutableBufferPointer<Result?>

        init(_ count: Int) {
            storage = .allocate(capacity: count)
            storage.initialize(repeating: nil)
        }

        deinit {
            _ = storage.deinitialize()
            storage.deallocate()
        }

        func set(_ part: Int, _ result: Result) { storage[part] = result }

        var results: [Result] { storage.map { $0! } }
    }

    /// `count` items cut into as many runs as there are threads, each of at
    /// least `smallest` items (one run when there are fewer): the ranges
    /// of the runs, in order.
    public static func runs(of count: Int, smallest: Int) -> [Range<Int>] {
        let parts = max(1, min(threads, count / max(1, smallest)))
        return (0..<parts).map { part in count * part / parts..<count * (part + 1) / parts }
    }
}

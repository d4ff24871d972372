import Dispatch
import LensLog

/// The results of `make(0) … make(count - 1)`, made a chunk at a time on
/// another thread while the caller takes them in order: the caller's work
/// on each result overlaps the making of those after it. A caller that
/// would wait makes the next chunk no thread has begun instead, so when
/// its own work is the quicker, both threads make results, as a split
/// across two cores would.
///
/// A batch put uses it for its entities' encodings: staging each entity
/// (finding the row it replaces, copying it into its box) runs on one
/// thread, and the encodings it needs are made beside it.
///
/// `@unchecked Sendable`: a chunk's slots are filled only by the thread
/// that claimed it, and claims are made under `lock`, each chunk once.
/// They are moved out only by the caller, after it filled the chunk itself
/// or saw it marked made under `lock`, which the other thread does after
/// filling it. `claimed`, `made` and `stopped` are touched only under
/// `lock`; `known` only by the caller.
final class MadeInOrder<Result: Sendable>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Result?>
    private let chunk: Int
    private let make: @Sendable (Int) -> Result
    private let lock = ConditionLock()
    /// Chunks a thread has begun, from the first: the next to claim.
    private var claimed = 0
    /// Whether each chunk is made.
    private var made: [Bool]
    /// Set by ``stop()``: the other thread claims nothing more.
    private var stopped = false
    /// The chunk the caller last found made; the caller's alone.
    private var known = -1

    /// Starts making results on another thread, `chunk` at a time.
    init(count: Int, chunk: Int, _ make: @escaping @Sendable (Int) -> Result) {
        precondition(chunk > 0, "a chunk holds at least one result")
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
        self.chunk = chunk
        self.make = make
        made = Array(repeating: false, count: (count + chunk - 1) / chunk)
        // The block holds the object until it returns: a caller that drops
        // it (a put that returns, or throws) frees nothing this thread
        // still fills.
        DispatchQueue.global().async { self.makeAhead() }
    }

    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }

    /// Result `index`, moved out: each is taken once, in order, by one
    /// thread. Makes the chunk itself when no thread has begun it. While
    /// the other thread makes it, makes the next chunk nobody has begun,
    /// and waits only when none is left.
    func take(_ index: Int) -> Result {
        let wanted = index / chunk
        if wanted != known {
            lock.lock()
            while !made[wanted] {
                if claimed < made.count {
                    // Chunks are claimed in order, and every one before
                    // `wanted` is made: this is `wanted` or one after it.
                    let next = claimed
                    claimed += 1
                    lock.unlock()
                    fill(next)
                    lock.lock()
                    made[next] = true
                } else {
                    lock.wait()
                }
            }
            lock.unlock()
            known = wanted
        }
        return slots[index].take()!
    }

    /// Lets the other thread claim nothing more: what the caller will not
    /// take need not be made. Returns at once; a chunk already begun is
    /// finished and freed with the rest.
    func stop() {
        lock.withLock { stopped = true }
    }

    /// The other thread's part: claims and makes chunks in order until
    /// none is left or the caller stops it.
    private func makeAhead() {
        while true {
            let next: Int? = lock.withLock {
                guard !stopped, claimed < made.count else { return nil }
                claimed += 1
                return claimed - 1
            }
            guard let next else { return }
            fill(next)
            lock.withLock {
                made[next] = true
                lock.broadcast()
            }
        }
    }

    private func fill(_ part: Int) {
        for index in part * chunk..<min(slots.count, (part + 1) * chunk) { slots[index] = make(index) }
    }
}

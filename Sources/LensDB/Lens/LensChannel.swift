/// What the notifier calls for each lens a commit may have changed.
protocol LensWatcher: AnyObject, Sendable {
    /// Reads the lens in `version` and, when its value changed, hands it on.
    func evaluate(_ version: StoreState)
}

/// One iteration of ``Lens/values`` or ``Lens/changes``: the notifier
/// offers each new value of the lens, and the consumer takes the change
/// from the value it saw last to the newest one.
///
/// It conflates: a consumer slower than the commits gets the newest value,
/// paired with the value *it* saw last (not the one before the newest,
/// which it never saw), and nothing when the value went back to what it
/// saw. `AsyncStream` with `.bufferingNewest(1)` conflates values, but
/// cannot keep the old half of a pair across dropped elements atomically,
/// so the buffer of one change lives here, under one lock.
final class LensChannel<Value: Codable & Sendable>: LensWatcher {
    typealias Change = (old: Value, new: Value)

    private struct State {
        /// The newest value offered, and its bytes (values are compared encoded).
        var offered: (value: Value, bytes: [UInt8])
        /// The value the consumer saw last.
        var seen: (value: Value, bytes: [UInt8])
        var waiter: CheckedContinuation<Change?, Never>?
        var finished = false

        /// The change to hand over, if the consumer has not seen the newest value.
        mutating func take() -> Change? {
            guard offered.bytes != seen.bytes else { return nil }
            defer { seen = offered }
            return (seen.value, offered.value)
        }
    }

    private let focus: any LensFocus<Value>
    private let state: Locked<State>

    /// A channel whose consumer has seen the lens's value in `version`.
    init(_ focus: any LensFocus<Value>, in version: StoreState) {
        self.focus = focus
        let value = focus.value(in: version)
        let start = (value, Self.bytes(of: value))
        state = Locked(State(offered: start, seen: start))
    }

    /// The value the consumer started from.
    var initialValue: Value { state.withLock { $0.seen.value } }

    func evaluate(_ version: StoreState) {
        let value = focus.value(in: version)
        let bytes = Self.bytes(of: value)
        let (waiter, change) = state.withLock { state -> (CheckedContinuation<Change?, Never>?, Change?) in
            guard bytes != state.offered.bytes else { return (nil, nil) }
            state.offered = (value, bytes)
            guard let waiter = state.waiter, let change = state.take() else { return (nil, nil) }
            state.waiter = nil
            return (waiter, change)
        }
        waiter?.resume(returning: change)
    }

    /// Ends the iteration: the consumer's next call returns nil.
    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next change, waiting for one; nil once the consuming task is
    /// cancelled or the store closed.
    func next() async -> Change? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Change?, Never>) in
                let ready = state.withLock { state -> Change?? in
                    if Task.isCancelled { return .some(nil) }
                    // A change offered before the store closed comes before the end.
                    if let change = state.take() { return change }
                    if state.finished { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    /// A value's bytes, to tell a change; a value that does not encode
    /// (nested deeper than the format allows) cannot be committed, so it
    /// never reaches here from a commit, and compares as empty.
    private static func bytes(of value: Value) -> [UInt8] {
        (try? ValueEncoder().encode(value)) ?? []
    }
}

extension Lens {
    /// The lens's value when iteration starts, then each committed change
    /// of *this* value, distinct until changed.
    ///
    /// ```swift
    /// for await enabled in protection.lens(\.enabled).values { toggle.isOn = enabled }
    /// ```
    ///
    /// A commit notifies a lens when it changes the lens's own value: a
    /// change below it (its ancestors' values contain it) or above it (a
    /// member created or removed whole), never a sibling's change. A lens
    /// on a missing member yields when the member appears, and its default
    /// or nil when it is removed. A write that changes nothing, or throws,
    /// yields nothing.
    ///
    /// A consumer slower than the commits gets the newest value: changes
    /// in between are conflated, never queued. Each iteration watches the
    /// lens until it ends, its task is cancelled or the store closes, and
    /// then releases everything it held.
    ///
    /// Thread-safety: iterate from any task.
    /// - Complexity: a commit costs each lens it may have changed one read
    ///   and one encoding of the lens's value; lenses elsewhere in the
    ///   document cost it nothing.
    public var values: LensValues<Value> { LensValues(lens: self) }

    /// Each committed change of this lens's value as `(old, new)`: what the
    /// consumer saw last (or the value when iteration started), then the
    /// newest value. Nothing when iteration starts. Conflated and released
    /// as ``values``.
    ///
    /// ```swift
    /// for await (old, new) in state.lens(\.theme).changes { log("theme: \(old) → \(new)") }
    /// ```
    public var changes: LensChanges<Value> { LensChanges(lens: self) }

    /// Starts watching: the channel, and the token whose release stops it.
    func watch() -> (LensChannel<Value>, LensWatch) {
        focus.learnKeys(in: store.current)
        let notifier = store.attachments.attachment { LensNotifier() }
        let (id, channel) = notifier.watch(focus, of: store) { LensChannel(focus, in: $0) }
        let closing = store.onClose { [weak channel] in channel?.finish() }
        return (channel, LensWatch(notifier: notifier, id: id, root: focus.rootName, store: store, closing: closing))
    }
}

/// Stops one watch when its iteration is released.
final class LensWatch: Sendable {
    let notifier: LensNotifier
    let id: Int
    let root: String
    let store: Store
    /// The store's handler that ends the iteration when it closes.
    let closing: Int?

    init(notifier: LensNotifier, id: Int, root: String, store: Store, closing: Int?) {
        self.notifier = notifier
        self.id = id
        self.root = root
        self.store = store
        self.closing = closing
    }

    deinit {
        notifier.unwatch(id, root: root, of: store)
        store.removeCloseHandler(closing)
    }
}

/// ``Lens/values``: the current value, then each change of it.
public struct LensValues<Value: Codable & Sendable>: AsyncSequence, Sendable {
    /// The lens's value.
    public typealias Element = Value
    let lens: Lens<Value>

    /// Starts watching the lens; the iterator's release stops it.
    public func makeAsyncIterator() -> Iterator {
        let (channel, watch) = lens.watch()
        return Iterator(channel: channel, watch: watch, initial: channel.initialValue)
    }

    /// One iteration: it watches the lens until it is released.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let channel: LensChannel<Value>
        let watch: LensWatch
        var initial: Value?

        /// The value when iteration started, then the next change's new
        /// value; nil once the task is cancelled.
        public mutating func next() async -> Value? {
            if let first = initial {
                initial = nil
                return first
            }
            return await channel.next()?.new
        }
    }
}

/// ``Lens/changes``: each change of the value, as `(old, new)`.
public struct LensChanges<Value: Codable & Sendable>: AsyncSequence, Sendable {
    /// The value the consumer saw last, and the newest one.
    public typealias Element = (old: Value, new: Value)
    let lens: Lens<Value>

    /// Starts watching the lens; the iterator's release stops it.
    public func makeAsyncIterator() -> Iterator {
        let (channel, watch) = lens.watch()
        return Iterator(channel: channel, watch: watch)
    }

    /// One iteration: it watches the lens until it is released.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let channel: LensChannel<Value>
        let watch: LensWatch

        /// The next change; nil once the task is cancelled.
        public mutating func next() async -> (old: Value, new: Value)? {
            await channel.next()
        }
    }
}

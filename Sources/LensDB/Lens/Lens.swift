/// A view focused on one part of a durable root document: read it, write
/// it, watch it.
///
/// ```swift
/// let state: Lens<AppState> = try store.root(AppState.self, named: "app", default: AppState())
/// let settings: Lens<Protection> = state.lens(\.protection, default: Protection(enabled: false))
/// let enabled: Lens<Bool> = settings.lens(\.enabled)
/// try enabled.set(true)                 // stores settings' default too, in the same commit
/// print(enabled.value)                  // true
/// for await value in enabled.values { … }
/// ```
///
/// A lens's value comes from its parent's value: the part stored there,
/// else the lens's own default, else nil (for an optional) or
/// `Document.null`. A parent's default has priority over the child's, since
/// the child reads the parent's value, default or not. A write below a
/// member that has no value stores each default on the way ("promotes" it)
/// in the same atomic commit; with no default on the way, it throws
/// ``LensError/missingParent(path:)`` and writes nothing.
///
/// Thread-safety: a lens is an immutable value; use it from any thread.
/// Reads see the latest committed version and never wait for writers; a
/// value read stays as it was, whatever is written after. Writes are
/// transactions, serialized with every other writer of the store.
///
/// Durability: a write returns when its commit is as durable as the
/// store's ``StoreOptions/durability`` says. A write whose value encodes as
/// the current one logs nothing and notifies nobody. A write that throws
/// (from its block, a missing parent, a failed commit or an I/O error) has
/// changed nothing, in memory or on disk, and notifies nobody.
///
/// A write logs only the member it changed (log operation 7), however large
/// the root: a key path's coding keys are learnt from the encoding once per
/// key path (see the article "Root lens").
public struct Lens<Value: Codable & Sendable>: Sendable {
    let store: Store
    let focus: any LensFocus<Value>

    init(store: Store, focus: any LensFocus<Value>) {
        self.store = store
        self.focus = focus
    }

    /// The value in the latest committed version: stored, or its default,
    /// or absent (nil, `Document.null`). Never waits for a writer.
    /// - Complexity: one key-path read per level for a typed root; for a
    ///   ``Document`` lens on a root opened with a type, an encoding of the root.
    public var value: Value {
        // The root's slot alone, not a copy of the whole version: a read
        // costs one retain, whatever else the store holds.
        focus.value(root: store.published.withLock { $0.roots[focus.rootName] })
    }

    /// The value in `version`, a state of this store (``Store/current``, or
    /// ``Transaction/state``): read several lenses from one version to see
    /// them consistent with each other.
    ///
    /// A version from before the root was opened with its type decodes the
    /// root at each read, and reads the default where it does not decode.
    public func value(in version: StoreState) -> Value { focus.value(in: version) }

    /// The root's name and the path of this lens in it, as errors show it:
    /// `app.protection.enabled`.
    public var path: String { focus.description }

    /// Sets the value, in a transaction of its own.
    ///
    /// Nothing is logged, and nobody notified, when `value` encodes as the
    /// current value. Defaults of members on the way that have no value are
    /// stored in the same commit.
    /// - Throws: ``LensError/missingParent(path:)`` when a member on the way
    ///   has no value and no default; the errors of
    ///   ``Store/write(durability:_:)``. A throw changes nothing.
    public func set(_ value: Value) throws {
        try store.write { tx in try tx[self].set(value) }
    }

    /// Removes the value: an optional becomes nil, a dictionary entry or a
    /// document member is removed; on the root lens, the whole document is
    /// deleted (the lens then reads its default). Nothing happens when no
    /// value is stored.
    /// - Throws: ``LensError/notRemovable(path:)`` for a non-optional
    ///   property; the errors of ``Store/write(durability:_:)``. A throw
    ///   changes nothing.
    public func remove() throws {
        try store.write { tx in try tx[self].remove() }
    }

    /// Changes the value in place, in a transaction of its own: `body`
    /// receives the current value (stored, default or absent), serialized
    /// with every other writer of the store.
    ///
    /// ```swift
    /// try settings.update { current in
    ///     guard current.passcode != nil else { throw AppError.noPasscode }
    ///     current.enabled = true
    /// }
    /// ```
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, and the errors of ``set(_:)``; either
    ///   way nothing changed. There is no variant that writes anyway.
    @discardableResult
    public func update<T>(_ body: (inout Value) throws -> T) throws -> T {
        try store.write { tx in try tx[self].update(body) }
    }
}

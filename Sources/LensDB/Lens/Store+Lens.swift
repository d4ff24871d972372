extension Store {
    /// Opens the root document `name` as a value of type `R`, read and
    /// written through lenses; `default` is its value while it does not exist.
    ///
    /// ```swift
    /// let state: Lens<AppState> = try store.root(AppState.self, named: "app", default: AppState())
    /// ```
    ///
    /// The first open in a process decodes the stored document once; from
    /// then on the root lives decoded in memory, and every write goes
    /// through lenses (the byte-level ``Transaction/setRoot(_:named:encoding:)``
    /// on it is a programmer error). A field added to `R` as optional decodes
    /// as nil. Opening writes nothing; opening again with the same type
    /// returns an equal lens (its own default).
    ///
    /// Thread-safety: any thread, but not from inside a write block of this
    /// store; serialized with writers while it decodes. `R`'s
    /// `init(from:)` runs while the open holds the writers' lock: it must
    /// not call back into this store (read its ``statistics``, watch it,
    /// open a table or root, write), which would stop the process.
    /// - Throws: ``LensError/undecodable(path:reason:)`` when the stored
    ///   document does not decode as `R` (the bytes stay untouched);
    ///   ``LensError/typeMismatch(root:openedAs:requested:)``;
    ///   ``LensError/rawRoot(root:)``; ``StoreError/reentrantWrite(path:)``
    ///   from inside a write block. A throw changes nothing.
    /// - Complexity: one decode of the document the first time, O(1) after.
    public func root<R: Codable & Sendable>(_ type: R.Type, named name: String, default: R) throws -> Lens<R> {
        try openRoot(name) { side in
            if let opened = side.head.lensRootTypes[name] {
                guard opened is RootType<R> else { throw LensError.typeMismatch(root: name, openedAs: opened.typeName, requested: "\(R.self)") }
                return
            }
            if let stored = side.head.roots[name] {
                let document = try Self.document(of: stored, root: name)
                do { side.head.roots[name] = try RootType<R>().decode(document) } catch { throw Self.undecodable(name, error) }
            }
            side.head.lensRootTypes[name] = RootType<R>()
        }
        return Lens(store: self, focus: RootedFocus<R, R>(root: LensRoot(name: name, default: `default`)))
    }

    /// Opens the root document `name` dynamically, as a ``Document``, whatever
    /// type wrote it; `default` is its value while it does not exist.
    ///
    /// ```swift
    /// let config: Lens<Document> = try store.root(named: "config")
    /// try config.lens(key: "protection", default: [:])["enabled"].set(true)
    /// ```
    ///
    /// It reads and writes the same storage as a typed lens on the root: on
    /// a root opened with a type, each read encodes the typed value, and a
    /// write must leave a document that decodes as the type
    /// (``LensError/undecodable(path:reason:)`` otherwise, writing nothing).
    ///
    /// Thread-safety and errors as ``root(_:named:default:)``.
    public func root(named name: String, default: Document = [:]) throws -> Lens<Document> {
        try openRoot(name) { side in
            guard side.head.lensRootTypes[name] == nil, let stored = side.head.roots[name] else { return }
            side.head.roots[name] = .decoded(try Self.document(of: stored, root: name))
        }
        return Lens(store: self, focus: RootedFocus<Document, Document>(root: LensRoot(name: name, default: `default`)))
    }

    /// Runs `prepare` on the head under the writers' lock, after every
    /// queued commit is published, then publishes the head: the same state,
    /// held decoded, so readers cannot tell the difference.
    private func openRoot(_ name: String, _ prepare: (inout WriterSide) throws -> Void) throws {
        try writer.withLock(reentry: StoreError.reentrantWrite(path: path ?? ":memory:") as any Error) { side in
            if side.head.rootEncodings[name] == .raw { throw LensError.rawRoot(root: name) }
            try waitForInFlightCommits(side)
            try prepare(&side)
            published.withLock { $0 = side.head }
        }
    }

    /// A stored root as a document, or why it is not one.
    private static func document(of stored: StoredValue, root name: String) throws -> Document {
        do { return try StoreState.document(of: stored) } catch { throw undecodable(name, error) }
    }

    static func undecodable(_ root: String, _ error: any Error) -> LensError {
        .undecodable(path: LensRoot<Document>.path(root, DecodingFailure.codingPath(error)), reason: DecodingFailure.reason(error))
    }
}

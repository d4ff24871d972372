extension Lens {
    /// The lens on the property at `keyPath`. An optional property reads nil
    /// while it is nil, and ``remove()`` sets it to nil.
    ///
    /// ```swift
    /// let protection: Lens<Protection?> = state.lens(\.protection)
    /// ```
    /// The key path must lead to stored properties (synthesized `Codable`
    /// encodes each under one key); see the article "Root lens".
    public func lens<V: Codable & Sendable>(_ keyPath: WritableKeyPath<Value, V> & Sendable) -> Lens<V> {
        let optional = OptionalValues.isOptional(V.self)
        return focused(LensStep(.keyPath(keyPath), default: nil, stored: { parent in
            let value = parent[keyPath: keyPath]
            return optional && OptionalValues.isNil(value) ? nil : value
        }, assign: { parent, child throws(LensStepFailure) in
            guard let value = child ?? OptionalValues.absent(V.self) else { throw .notRemovable }
            parent[keyPath: keyPath] = value
        }))
    }

    /// The lens on the optional property at `keyPath`, reading `default`
    /// while the property is nil: `state.lens(\.protection, default: Protection())`.
    /// A write below this lens stores the default first.
    public func lens<V: Codable & Sendable>(_ keyPath: WritableKeyPath<Value, V?> & Sendable, default: V) -> Lens<V> {
        focused(LensStep(.keyPath(keyPath), default: `default`, stored: { $0[keyPath: keyPath] },
                         assign: { parent, child in parent[keyPath: keyPath] = child }))
    }

    /// The lens on the property at `keyPath` of an optional value: nil while
    /// the value is nil, and a write throws ``LensError/missingParent(path:)``
    /// then. `state.lens(\.protection).lens(\.enabled)` is a `Lens<Bool?>`.
    public func lens<W, V: Codable & Sendable>(_ keyPath: WritableKeyPath<W, V> & Sendable) -> Lens<V?> where Value == W? {
        focused(LensStep(.keyPath(keyPath), default: nil, stored: { parent in parent.map { Optional($0[keyPath: keyPath]) } },
                         assign: { parent, child throws(LensStepFailure) in
            guard parent != nil else { throw .parentMissing }
            guard let value = child ?? nil else { throw .notRemovable }
            parent![keyPath: keyPath] = value
        }))
    }

    /// The lens on the optional property at `keyPath` of an optional value:
    /// nil while either is nil.
    public func lens<W, V: Codable & Sendable>(_ keyPath: WritableKeyPath<W, V?> & Sendable) -> Lens<V?> where Value == W? {
        focused(LensStep(.keyPath(keyPath), default: nil, stored: { parent in parent?[keyPath: keyPath].map { Optional($0) } },
                         assign: { parent, child throws(LensStepFailure) in
            guard parent != nil else { throw .parentMissing }
            parent![keyPath: keyPath] = child ?? nil
        }))
    }

    /// The lens on the optional property at `keyPath` of an optional value,
    /// reading `default` while either is nil. A write needs the value to exist.
    public func lens<W, V: Codable & Sendable>(_ keyPath: WritableKeyPath<W, V?> & Sendable, default: V) -> Lens<V> where Value == W? {
        focused(LensStep(.keyPath(keyPath), default: `default`, stored: { $0?[keyPath: keyPath] },
                         assign: { parent, child throws(LensStepFailure) in
            guard parent != nil else { throw .parentMissing }
            parent![keyPath: keyPath] = child
        }))
    }

    /// The lens on the property at `keyPath` of an optional value, reading
    /// `default` while the value is nil. A write needs the value to exist.
    public func lens<W, V: Codable & Sendable>(_ keyPath: WritableKeyPath<W, V> & Sendable, default: V) -> Lens<V> where Value == W? {
        focused(LensStep(.keyPath(keyPath), default: `default`, stored: { $0?[keyPath: keyPath] },
                         assign: { parent, child throws(LensStepFailure) in
            guard parent != nil else { throw .parentMissing }
            guard let child else { throw .notRemovable }
            parent![keyPath: keyPath] = child
        }))
    }

    func focused<Child: Codable & Sendable>(_ step: LensStep<Value, Child>) -> Lens<Child> {
        Lens<Child>(store: store, focus: focus.appending(step))
    }
}

extension Lens {
    /// The lens on the entry `key` of a dictionary: nil while absent;
    /// ``remove()`` removes the entry.
    public func lens<V: Codable & Sendable>(key: String) -> Lens<V?> where Value == [String: V] {
        focused(LensStep(.key(key), default: nil, stored: { $0[key].map { Optional($0) } },
                         assign: { parent, child in parent[key] = child ?? nil }))
    }

    /// The lens on the entry `key` of a dictionary, reading `default` while absent.
    public func lens<V: Codable & Sendable>(key: String, default: V) -> Lens<V> where Value == [String: V] {
        focused(LensStep(.key(key), default: `default`, stored: { $0[key] }, assign: { parent, child in parent[key] = child }))
    }

    /// The lens on the entry `key` of an optional dictionary:
    /// `state.lens(\.flags).lens(key: "beta")` is a `Lens<Bool?>`. A write
    /// throws ``LensError/missingParent(path:)`` while the dictionary is nil.
    public func lens<V: Codable & Sendable>(key: String) -> Lens<V?> where Value == [String: V]? {
        focused(LensStep(.key(key), default: nil, stored: { $0?[key].map { Optional($0) } },
                         assign: { parent, child throws(LensStepFailure) in
            guard parent != nil else { throw .parentMissing }
            parent![key] = child ?? nil
        }))
    }

    /// The lens on the entry `key` of an optional dictionary, reading
    /// `default` while either is absent.
    public func lens<V: Codable & Sendable>(key: String, default: V) -> Lens<V> where Value == [String: V]? {
        focused(LensStep(.key(key), default: `default`, stored: { $0?[key] },
                         assign: { parent, child throws(LensStepFailure) in
            guard parent != nil else { throw .parentMissing }
            parent![key] = child
        }))
    }
}

extension Lens where Value == Document {
    /// The lens on the member `key` of a document: `doc["protection"]["enabled"]`.
    /// It reads `.null` while the member is absent; ``remove()`` removes it.
    /// A write throws ``LensError/missingParent(path:)`` while this document
    /// has no value, and ``LensError/notAnObject(path:)`` while it is not an object.
    public subscript(key: String) -> Lens<Document> {
        focused(Self.member(key, default: nil))
    }

    /// The lens on the member `key`, reading `default` while it is absent;
    /// a write below it stores the default first.
    public func lens(key: String, default: Document) -> Lens<Document> {
        focused(Self.member(key, default: `default`))
    }

    private static func member(_ key: String, default: Document?) -> LensStep<Document, Document> {
        LensStep(.key(key), default: `default`, stored: { $0.member(at: [key]) }, assign: { parent, child throws(LensStepFailure) in
            switch parent {
            case .object: break
            case .null: throw .parentMissing
            default: throw .parentNotAnObject
            }
            if let child { parent[key] = child } else { parent.removeValue(forKey: key) }
        })
    }
}

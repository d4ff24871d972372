/// What a ``Lens`` focuses on, with the type of its root hidden: how to read
/// the value in a state and write it in a transaction.
protocol LensFocus<Value>: Sendable {
    associatedtype Value: Codable & Sendable
    var rootName: String { get }
    /// `app.protection.enabled`, as far as the lens's coding keys are known.
    var description: String { get }
    /// The lens's value in `state`: the stored value, its default, or absent.
    func value(in state: StoreState) -> Value
    /// The lens's value when its root's slot in a state holds `slot`.
    func value(root slot: StoredValue?) -> Value
    /// Reads the value in the transaction, lets `edit` say what to change,
    /// and makes that change in the transaction; see `RootedFocus.write`.
    func write(in transaction: inout Transaction, verifying: Bool, _ edit: (Value) throws -> LensEdit<Value>) throws
    /// The focus one step further.
    func appending<Child: Codable & Sendable>(_ step: LensStep<Value, Child>) -> any LensFocus<Child>
    /// The object keys from the root's top to this lens as far as they are
    /// known, and whether they reach it: where notifications file the lens.
    func knownKeys() -> (keys: [String], complete: Bool)
    /// Learns the coding keys of this lens's key paths that no write has
    /// taught yet, from trial writes on a copy of the root in `state`.
    func learnKeys(in state: StoreState)
}

/// What a write does to a lens's value.
enum LensEdit<Value> {
    case set(Value)
    case remove
}

/// One level of a lens's chain, without its value type: what a write needs
/// to find the member it changed and log it.
struct LensLevel<Root>: Sendable {
    /// nil for the root itself.
    let component: LensPathComponent?
    /// The level's value in the value format, as its parent stores it;
    /// nil when absent. The root level's is the whole root.
    let storedBytes: @Sendable (Root) throws -> [UInt8]?
}

/// Records the highest level a write promoted a default at (0: the root
/// itself did not exist), which is the member the write must log whole.
/// A class, so the blocks nested in one write's levels all add to it; it
/// lives for one write, on one thread.
final class WriteTrace {
    private(set) var promoted: Int?
    func promote(_ level: Int) { promoted = min(promoted ?? level, level) }
}

/// A lens over a root of type `Root` (the type a program opened it with,
/// or ``Document``): closures composed from the root down, one level per step.
struct RootedFocus<Root: Codable & Sendable, Value: Codable & Sendable>: LensFocus {
    let root: LensRoot<Root>
    let levels: [LensLevel<Root>]
    /// The value in a root that exists (or the root's default).
    let read: @Sendable (Root) -> Value
    /// Runs `body` on the value inside `root`, stores the result in its
    /// parent, and so up to the root; defaults on the way are promoted.
    let update: @Sendable (inout Root, WriteTrace, (inout Value) throws -> Void) throws -> Void
    /// Removes the value from its parent, and stores the parent up to the root.
    let removal: @Sendable (inout Root, WriteTrace) throws -> Void
    /// Values a trial write may set to learn coding keys: the lens's
    /// default and its absent value.
    var probes: [Value] = []

    var rootName: String { root.name }

    /// The focus on the root itself.
    init(root: LensRoot<Root>) where Value == Root {
        self.root = root
        levels = [LensLevel(component: nil, storedBytes: { try ValueEncoder().encode($0) })]
        read = { $0 }
        update = { root, _, body in try body(&root) }
        removal = { _, _ in preconditionFailure("a root is removed by its write, not by a step") }
    }

    init(root: LensRoot<Root>, levels: [LensLevel<Root>], read: @escaping @Sendable (Root) -> Value,
         update: @escaping @Sendable (inout Root, WriteTrace, (inout Value) throws -> Void) throws -> Void,
         removal: @escaping @Sendable (inout Root, WriteTrace) throws -> Void) {
        self.root = root
        self.levels = levels
        self.read = read
        self.update = update
        self.removal = removal
    }

    func value(in state: StoreState) -> Value {
        read(root.load(state) ?? root.default)
    }

    func value(root slot: StoredValue?) -> Value {
        read(root.load(slot) ?? root.default)
    }

    func appending<Child: Codable & Sendable>(_ step: LensStep<Value, Child>) -> any LensFocus<Child> {
        let (read, update, depth, name) = (read, update, levels.count, root.name)
        let levels = levels + [LensLevel(component: step.component, storedBytes: { root in
            try step.stored(read(root)).map { try ValueEncoder().encode($0) }
        })]
        // Names the member a step failed at: its parent, or itself.
        let failure = { @Sendable (error: LensStepFailure) -> LensError in
            switch error {
            case .parentMissing: .missingParent(path: Self.describe(name, levels.prefix(depth)))
            case .parentNotAnObject: .notAnObject(path: Self.describe(name, levels.prefix(depth)))
            case .notRemovable: .notRemovable(path: Self.describe(name, levels[...]))
            }
        }
        var focus = RootedFocus<Root, Child>(
            root: root, levels: levels,
            read: { step.effective(read($0)) },
            update: { root, trace, body in
                try update(&root, trace) { parent in
                    var child: Child
                    if let stored = step.stored(parent) {
                        child = stored
                    } else if let value = step.default {
                        child = value
                        trace.promote(depth)
                    } else if let value = step.absent {
                        child = value
                    } else {
                        throw failure(.parentMissing)
                    }
                    try body(&child)
                    do throws(LensStepFailure) { try step.assign(&parent, child) } catch { throw failure(error) }
                }
            },
            removal: { root, trace in
                try update(&root, trace) { parent in
                    do throws(LensStepFailure) { try step.assign(&parent, nil) } catch { throw failure(error) }
                }
            })
        focus.probes = [step.default, step.absent].compactMap { $0 }
        return focus
    }

    var description: String { Self.describe(root.name, levels[...]) }

    func knownKeys() -> (keys: [String], complete: Bool) {
        var keys: [String] = []
        for level in levels.dropFirst() {
            guard let next = Self.knownKeys(of: level.component) else { return (keys, false) }
            keys += next
        }
        return (keys, true)
    }

    static func knownKeys(of component: LensPathComponent?) -> [String]? {
        switch component {
        case nil: []
        case let .key(key)?: [key]
        case let .keyPath(keyPath)?:
            if case let .keys(keys)? = CodingPathLearning.resolution(of: keyPath) { keys } else { nil }
        }
    }

    /// `app.protection.enabled`. A key path whose keys are not learnt yet
    /// is shown by its own text (`\AppState.protection` shows as
    /// `.protection`), which names the property rather than its coding key.
    static func describe(_ name: String, _ levels: ArraySlice<LensLevel<Root>>) -> String {
        var text = name
        var keys: [String] = []
        for level in levels.dropFirst() {
            if let known = knownKeys(of: level.component) {
                keys += known
            } else if case let .keyPath(keyPath)? = level.component {
                text = CodingPathText(root: text, path: keys).description + propertyText(keyPath)
                keys = []
            }
        }
        return CodingPathText(root: text, path: keys).description
    }

    /// `.protection` for `\AppState.protection`; the whole text in brackets
    /// when it is not of that shape (a subscript, say).
    private static func propertyText(_ keyPath: AnyKeyPath) -> String {
        let text = "\(keyPath)"
        guard text.hasPrefix("\\"), let dot = text.firstIndex(of: "."), !text.contains("<") else { return "[\(text)]" }
        return String(text[dot...])
    }
}

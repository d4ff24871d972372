/// Where a lens's part sits inside its parent's encoded document.
enum LensPathComponent: Sendable {
    /// A dictionary entry or a document member: the key itself.
    case key(String)
    /// A property reached by a key path: its object keys are learnt from the
    /// encoding (``CodingPathLearning``), once per key path.
    case keyPath(AnyKeyPath & Sendable)
}

/// Why one step of a lens could not write; the lens names the path.
enum LensStepFailure: Error {
    /// The parent has no value.
    case parentMissing
    /// The child cannot be absent (a non-optional property).
    case notRemovable
    /// The parent is a document that is not an object.
    case parentNotAnObject
}

/// One step of a lens: how a child value sits in its parent value.
///
/// A child is *stored* when its parent holds it (an optional that is not
/// nil, an entry or member that exists); its lens reads the stored value,
/// else its default, else ``absent`` (nil, or `Document.null`).
struct LensStep<Parent, Child: Codable & Sendable>: Sendable {
    let component: LensPathComponent
    /// The child's value as its parent stores it; nil when absent, or when
    /// the parent itself is absent (an optional parent that is nil).
    let stored: @Sendable (Parent) -> Child?
    /// Stores `child` in `parent`, or removes it when nil.
    let assign: @Sendable (inout Parent, Child?) throws(LensStepFailure) -> Void
    /// What the lens reads when nothing is stored, and what a write below
    /// it stores first ("promotes").
    let `default`: Child?
    /// What the lens reads when nothing is stored and there is no default:
    /// nil for an optional, `.null` for a document; nil when the child type
    /// has no absent value (then it is always stored).
    let absent: Child?

    init(
        _ component: LensPathComponent, default: Child?, absent: Child? = OptionalValues.absent(Child.self),
        stored: @escaping @Sendable (Parent) -> Child?, assign: @escaping @Sendable (inout Parent, Child?) throws(LensStepFailure) -> Void
    ) {
        self.component = component
        self.default = `default`
        self.absent = absent
        self.stored = stored
        self.assign = assign
    }

    /// The child's value as its lens reads it.
    func effective(_ parent: Parent) -> Child {
        guard let value = stored(parent) ?? `default` ?? absent else {
            preconditionFailure("a lens step of a type that cannot be absent found nothing stored")
        }
        return value
    }
}

/// Optional values met through generic code: whether a value is nil, and
/// the nil of a type, when the type is an `Optional`.
enum OptionalValues {
    /// Whether `value` is an `Optional` that is nil (not `.some(nil)`).
    static func isNil<T>(_ value: T) -> Bool {
        (value as? any OptionalValue)?.isNil ?? false
    }

    /// Whether `T` is an `Optional`. Asked once per lens, so that reading a
    /// value of any other type never pays for a dynamic cast.
    static func isOptional<T>(_ type: T.Type) -> Bool {
        T.self is any OptionalValue.Type
    }

    /// `T`'s nil when `T` is an `Optional`; `.null` for a ``Document``.
    static func absent<T>(_ type: T.Type) -> T? {
        if T.self == Document.self { return Document.null as? T }
        // `$0` is `T.self`: the cast cannot fail.
        return (T.self as? any OptionalValue.Type).map { $0.nilValue as! T }
    }
}

protocol OptionalValue {
    var isNil: Bool { get }
    static var nilValue: Self { get }
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
    static var nilValue: Self { nil }
}

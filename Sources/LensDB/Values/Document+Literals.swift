import Foundation

extension Document: ExpressibleByNilLiteral {
    /// `nil` is `.null`.
    public init(nilLiteral: ()) { self = .null }
}

extension Document: ExpressibleByBooleanLiteral {
    /// A boolean literal is `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension Document: ExpressibleByIntegerLiteral {
    /// An integer literal is `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension Document: ExpressibleByFloatLiteral {
    /// A floating-point literal is `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension Document: ExpressibleByStringLiteral {
    /// A string literal is `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension Document: ExpressibleByArrayLiteral {
    /// An array literal is `.array`.
    public init(arrayLiteral elements: Document...) { self = .array(elements) }
}

extension Document: ExpressibleByDictionaryLiteral {
    /// A dictionary literal is `.object`; for a repeated key the last value wins.
    public init(dictionaryLiteral elements: (String, Document)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

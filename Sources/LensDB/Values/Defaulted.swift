/// Names the value that a ``Defaulted`` field takes when a stored value
/// lacks it.
///
/// One provider type per default, since a property wrapper's generic
/// argument must be a type:
///
/// ```swift
/// enum NoPhone: DefaultValueProvider {
///     static var defaultValue: String { "" }
/// }
/// ```
public protocol DefaultValueProvider {
    /// The field's type.
    associatedtype Value: Codable & Sendable
    /// What a missing field decodes to. Read at each such decode.
    static var defaultValue: Value { get }
}

/// A field that decodes to its provider's default when the stored value
/// has no such key: how a field added to a `Codable` type in a new release
/// gets a value in the rows an older release wrote, with synthesized
/// `Codable`.
///
/// A default in the declaration alone (`var phone = ""`) does not do this:
/// synthesized `init(from:)` decodes every non-optional field with
/// `decode(_:forKey:)`, which throws `keyNotFound` for a value that lacks
/// it. `@Defaulted` changes which `decode(_:forKey:)` is called:
///
/// ```swift
/// enum NoPhone: DefaultValueProvider { static var defaultValue: String { "" } }
///
/// struct Contact: Entity {
///     var id: Int64
///     var name: String
///     @Defaulted<NoPhone> var phone: String   // added in version 2
/// }
/// ```
///
/// Contract:
/// - A missing key decodes to `Provider.defaultValue`. A key that is present
///   decodes as `Value` does, `null` included: an optional `Value` that was
///   stored as `nil` stays `nil`, and a non-optional one with a stored
///   `null` fails as it would without the wrapper.
/// - It works with any `Decoder` — LensDB's ``ValueDecoder`` and
///   ``DocumentDecoder``, Foundation's `JSONDecoder` — through the
///   synthesized `init(from:)` of the type that declares the field, in a
///   module that imports LensDB. A hand-written `init(from:)` calls
///   `decode(Defaulted<Provider>.self, forKey:)` to get the same.
/// - It encodes as its value alone (`"phone": "…"`), so the stored bytes and
///   JSON are what a plain field of type `Value` would write, and removing
///   the wrapper later reads them unchanged. (One difference: an optional
///   `Value` that is `nil` is written as `null`, where a plain optional
///   field leaves the key out.)
/// - The default applies to decoding only. The memberwise initializer
///   still takes the field; an initial value in the declaration
///   (`@Defaulted<NoPhone> var phone = ""`) is what it defaults to there,
///   and should be the provider's value.
@propertyWrapper
public struct Defaulted<Provider: DefaultValueProvider>: Codable, Sendable {
    /// The field's value.
    public var wrappedValue: Provider.Value

    /// A field holding `wrappedValue`.
    public init(wrappedValue: Provider.Value) {
        self.wrappedValue = wrappedValue
    }

    /// Decodes the value alone. As a keyed field it is decoded by
    /// `KeyedDecodingContainer.decode(_:forKey:)` instead, which handles a
    /// missing key.
    public init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(Provider.Value.self)
    }

    /// Encodes the value alone, as a field of type `Value` would.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension Defaulted: Equatable where Provider.Value: Equatable {}
extension Defaulted: Hashable where Provider.Value: Hashable {}

extension KeyedDecodingContainer {
    /// A ``Defaulted`` field: the provider's default when `key` is missing,
    /// the decoded value otherwise. Synthesized `init(from:)` calls this
    /// overload for a `@Defaulted` field, since it is more specific than the
    /// generic `decode(_:forKey:)`.
    /// - Throws: what decoding the value throws, when the key is present.
    public func decode<Provider>(_ type: Defaulted<Provider>.Type, forKey key: Key) throws -> Defaulted<Provider> {
        guard contains(key) else { return Defaulted(wrappedValue: Provider.defaultValue) }
        return Defaulted(wrappedValue: try decode(Provider.Value.self, forKey: key))
    }
}

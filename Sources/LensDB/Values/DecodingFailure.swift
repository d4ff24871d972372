/// What a person needs from a `DecodingError`: where in the value it
/// happened and why, in words. Typed tables and lenses name the coding path
/// of a stored value that no longer decodes as its type (promise 9).
enum DecodingFailure {
    /// The coding path of the failure, as `protection.enabled` or
    /// `items[2].name`; empty for the top level. For a missing key, the path
    /// ends with that key.
    static func codingPath(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "" }
        let context: DecodingError.Context
        switch error {
        case let .typeMismatch(_, c), let .valueNotFound(_, c), let .keyNotFound(_, c), let .dataCorrupted(c): context = c
        @unknown default: return ""
        }
        var path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        if case let .keyNotFound(key, _) = error { path += ".\(key.stringValue)" }
        return path.hasPrefix(".") ? String(path.dropFirst()) : path
    }

    /// The name of the field the value lacks, when a missing key is why it
    /// did not decode: the field a newer version of its type added.
    static func missingField(_ error: any Error) -> String? {
        guard case let .keyNotFound(key, _)? = error as? DecodingError else { return nil }
        return key.stringValue
    }

    /// Why the value did not decode, in words.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case let .keyNotFound(key, _): return "the field \(key.stringValue) is missing"
        case let .typeMismatch(type, context): return "expected \(type): \(context.debugDescription)"
        case let .valueNotFound(type, context): return "expected \(type), found nothing: \(context.debugDescription)"
        case let .dataCorrupted(context): return context.debugDescription
        @unknown default: return "\(error)"
        }
    }
}

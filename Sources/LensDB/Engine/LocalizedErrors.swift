import Foundation

// Every public error of LensDB reads the same through `"\(error)"` and
// through `error.localizedDescription`, which without these conformances is
// "The operation could not be completed. (LensDB.TableError error 0.)".
// LensLog's errors conform in LensLog, so a program importing only LensLog
// has them too. `ErrorDescriptionTests` fails when a public error type is
// missing here.

extension StoreError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension TableError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension QueryError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension LensError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension InspectionError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension InvariantViolation: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

// FoundationEssentials is where `LocalizedError` lives on Linux, without the
// rest of Foundation (ICU, NSObject bridging) that LensLog does not need;
// Darwin has only Foundation.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Every public error of LensLog reads the same through `"\(error)"` and
// through `error.localizedDescription`, which without these conformances is
// "The operation could not be completed. (LensLog.LogError error 3.)".
// `ErrorDescriptionTests` fails when a public error type is missing here.

extension LogError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension SnapshotError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension RecoveryError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension StorageError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

extension FollowError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}

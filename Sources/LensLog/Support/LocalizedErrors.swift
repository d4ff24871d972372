// FoundationEssentials is where `LocalizedError` lives on Linux, without the
// rest of Foundation (ICU, NSObject bridging) that LensLog does not need;
// Darwin has only Foundation.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An error whose one-sentence `description` is also its
/// `localizedDescription`, which without `LocalizedError` would be "The
/// operation could not be completed. (LensLog.LogError error 3.)". Every
/// public error of LensLog and LensDB conforms; `ErrorDescriptionTests`
/// fails when one does not.
public protocol DescribedError: LocalizedError, CustomStringConvertible {}

extension DescribedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}

extension LogError: DescribedError {}
extension SnapshotError: DescribedError {}
extension RecoveryError: DescribedError {}
extension StorageError: DescribedError {}
extension FollowError: DescribedError {}
extension EncryptionError: DescribedError {}

// Every public error of LensDB reads the same through `"\(error)"` and
// through `error.localizedDescription` (`DescribedError`, in LensLog, whose
// errors conform there, so a program importing only LensLog has them too).

extension StoreError: DescribedError {}
extension TableError: DescribedError {}
extension QueryError: DescribedError {}
extension LensError: DescribedError {}
extension InspectionError: DescribedError {}
extension InvariantViolation: DescribedError {}
extension EncryptionKeyError: DescribedError {}
extension MigrationError: DescribedError {}

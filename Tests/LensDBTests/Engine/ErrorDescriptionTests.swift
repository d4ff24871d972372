import Foundation
import Testing
@testable import LensDB

/// Every public error reads the same however a program prints it: through
/// `"\(error)"`, and through `error.localizedDescription`, which is what
/// logging and UI code usually reach for, and which without a
/// `LocalizedError` conformance says only "The operation could not be
/// completed. (LensDB.TableError error 0.)".
@Suite struct ErrorDescriptionTests {
    /// One value, at least, of every public error type of LensLog and LensDB,
    /// by type name. A new public error type fails
    /// ``everyPublicErrorTypeInSourcesHasASampleHere()`` until it is added.
    static let samples: [String: [any Error]] = [
        "LogError": [
            LogError.badMagic(file: "/s/log-1.log"),
            LogError.corruption(file: "/s/log-1.log", offset: 128, lsn: 7, reason: .checksumMismatch),
            LogError.writerClosed,
        ],
        "SnapshotError": [SnapshotError.checksumMismatch(file: "/s/snapshot-1.snap")],
        "RecoveryError": [
            RecoveryError.noUsableSnapshot(directory: "/s", damaged: []),
            RecoveryError.missingRecords(file: "/s/log-2.log", expectedLSN: 5, firstLSN: 9),
        ],
        "StorageError": [StorageError(.noSpace, .write, path: "/s/log-1.log"), StorageError(.locked, .lock, path: "/s", lockHolder: 42)],
        "FollowError": [FollowError.diverged(lsn: 3, file: "/s/log-1.log")],
        "StoreError": [
            StoreError.locked(path: "/s", holder: 42), StoreError.closed(path: "/s"),
            StoreError.wrongEncryptionKey(path: "/s", file: "/s/log-2.log", found: KeyID(rawValue: 0x9c1e), given: KeyID(rawValue: 7)),
        ],
        "EncryptionError": [EncryptionError.keyRequired(
            file: "/s/log-2.log", found: FileEncryption(algorithm: .aes256GCM, keyID: KeyID(rawValue: 0x9c1e)))],
        "EncryptionKeyError": [EncryptionKeyError.wrongLength(31)],
        "TableError": [
            TableError.undecodable(table: "notes", id: "1", codingPath: "priority", missingField: "priority",
                                   reason: "the field priority is missing", count: 5),
            TableError.quarantined(table: "notes", id: "3"),
            TableError.uniqueViolation(index: "people.email", value: "a@example.com"),
        ],
        "QueryError": [QueryError.negativeLimit(-1)],
        "LensError": [LensError.missingParent(path: "app.protection"), LensError.undecodable(path: "app.theme", reason: "expected String")],
        "InspectionError": [
            InspectionError.outputExists(path: "/out.lensdb"), InspectionError.keyRequired(path: "/s", keyID: KeyID(rawValue: 0x9c1e)),
            InspectionError.workspaceInUse(path: "/s.repair", entries: ["/s.repair/notes.txt"]),
        ],
        "InvariantViolation": [InvariantViolation(description: "published LSN 9 ahead of head 8")],
        "MigrationError": [
            MigrationError.unknownMigrations(store: "/s", names: ["split-people"]),
            MigrationError.tableIsOpen(store: "/s", migration: "add-phone", table: "contacts"),
        ],
    ]

    @Test func everyPublicErrorReadsTheSameThroughLocalizedDescription() {
        for (name, errors) in Self.samples {
            #expect(!errors.isEmpty, "\(name) has no sample")
            for error in errors {
                #expect("\(type(of: error))" == name, "a sample of \(type(of: error)) is listed under \(name)")
                #expect(error.localizedDescription == "\(error)", "\(name): localizedDescription differs from the description")
                #expect(!error.localizedDescription.contains("The operation could not be completed"), "\(name)")
            }
        }
    }

    /// The list above is complete: every `public` type in Sources/ that
    /// conforms to `Error` has a sample, and conforms to `DescribedError` (and so `LocalizedError`) in
    /// its own module, so a program that imports only LensLog has the
    /// conformances of LensLog's errors.
    @Test func everyPublicErrorTypeInSourcesHasASampleHere() throws {
        let declared = try Self.publicErrorTypes()
        #expect(declared.count >= Self.samples.count, "the scan found \(declared.keys.sorted())")
        for (name, module) in declared.sorted(by: { $0.key < $1.key }) {
            #expect(Self.samples[name] != nil, "\(name) (\(module)) is a public error with no sample in ErrorDescriptionTests")
            let conformsInItsModule = try Self.swiftFiles(in: "Sources/\(module)").contains { $0.text.contains("extension \(name): DescribedError") }
            #expect(conformsInItsModule, "\(name) has no `extension \(name): DescribedError` in Sources/\(module)")
        }
        for name in Self.samples.keys {
            #expect(declared[name] != nil, "\(name) has a sample but the scan of Sources/ did not find it")
        }
    }

    /// Public types declared with `Error` among their conformances, or given
    /// it by an extension, by name, with the module (folder of Sources/) that
    /// declares them.
    static func publicErrorTypes() throws -> [String: String] {
        var publicTypes: [String: String] = [:]
        var errorTypes: Set<String> = []
        let declaration = #/^\s*public\s+(?:final\s+)?(?:enum|struct|class|actor)\s+(\w+)(?:<[^>{]*>)?\s*(?::\s*([^{]*))?/#
        let extensionLine = #/^\s*(?:public\s+)?extension\s+(\w+)\s*:\s*([^{]*)/#
        for module in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path) {
            for file in try swiftFiles(in: "Sources/\(module)") {
                for line in file.text.split(separator: "\n", omittingEmptySubsequences: true) {
                    if let match = line.firstMatch(of: declaration) {
                        publicTypes[String(match.1)] = module
                        if let list = match.2, conformsToError(list) { errorTypes.insert(String(match.1)) }
                    } else if let match = line.firstMatch(of: extensionLine), conformsToError(match.2) {
                        errorTypes.insert(String(match.1))
                    }
                }
            }
        }
        return publicTypes.filter { errorTypes.contains($0.key) }
    }

    /// Whether a conformance list names `Error` (or `LocalizedError`).
    static func conformsToError(_ list: Substring) -> Bool {
        list.split(separator: ",").contains { ["Error", "LocalizedError", "Swift.Error"].contains($0.trimmingCharacters(in: .whitespaces)) }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func swiftFiles(in folder: String) throws -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        guard let walk = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return try walk.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map {
            ($0, try String(contentsOf: base.appendingPathComponent($0), encoding: .utf8))
        }
    }
}

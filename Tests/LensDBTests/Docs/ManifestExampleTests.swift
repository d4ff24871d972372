import Foundation
import LensTestSupport
import Testing

/// The manifest lines the README and "Getting started" give a user to paste
/// are Swift that no test target can compile: they belong in a
/// `Package.swift`. So they are quoted from whole manifests under
/// `Tests/Fixtures/packages`, and each is evaluated here the way SwiftPM
/// evaluates a user's: `swift package dump-package`, which compiles and runs
/// the manifest and checks that every `.product(name:package:)` names one of
/// its dependencies, without fetching anything. The product named must then
/// be a library of LensDB's own manifest.
@Suite struct ManifestExampleTests {
    static let fixtures = "Tests/Fixtures/packages"

    static var manifests: [String] {
        let directory = DocumentationSources.root.appendingPathComponent(fixtures).path
        // An unreadable directory gives no arguments, which the count test below catches.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: "\(directory)/\($0)/Package.swift") }.sorted()
    }

    @Test func bothWaysOfDependingOnLensDBAreDocumented() {
        #expect(Self.manifests == ["FromGitHub", "LocalClone"])
    }

    @Test(arguments: manifests)
    func userManifestEvaluatesAndNamesALensDBLibrary(_ name: String) throws {
        let directory = try TemporaryDirectory("manifest-\(name)")
        defer { directory.remove() }
        let source = DocumentationSources.root.appendingPathComponent("\(Self.fixtures)/\(name)/Package.swift")
        try FileManager.default.copyItem(atPath: source.path, toPath: "\(directory.path)/Package.swift")

        let manifest = try Self.dumpPackage(at: directory.path, scratch: directory.path)
        let libraries = try Self.libraries(of: Self.dumpPackage(at: DocumentationSources.root.path, scratch: directory.path))
        let products = Self.productDependencies(of: manifest).filter { $0.package == "LensDB" }
        #expect(!products.isEmpty, "\(name) depends on no product of LensDB")
        for product in products {
            #expect(libraries.contains(product.name), "\(name) depends on \(product.name), which LensDB does not offer; its libraries: \(libraries.sorted())")
        }
    }

    /// The manifest in `directory` as SwiftPM's JSON, or a failure with what
    /// SwiftPM said. SwiftPM's files go to `scratch`, never to the build
    /// directory that `swift test` holds locked.
    static func dumpPackage(at directory: String, scratch: String) throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", directory, "--scratch-path", "\(scratch)/.build", "dump-package"]
        let output = Pipe()
        let errorFile = "\(scratch)/dump-package.stderr"
        guard FileManager.default.createFile(atPath: errorFile, contents: nil),
              let errors = FileHandle(forWritingAtPath: errorFile) else {
            throw ManifestFailure(directory: directory, message: "cannot create \(errorFile)")
        }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read to the end before waiting: SwiftPM blocks on a full pipe.
        let json = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            // The failure is thrown either way; SwiftPM's words only explain it.
            let message = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "(no output)"
            throw ManifestFailure(directory: directory, message: message)
        }
        return try #require(JSONSerialization.jsonObject(with: json) as? [String: Any])
    }

    struct ManifestFailure: Error, CustomStringConvertible {
        var directory: String
        var message: String
        var description: String { "swift package dump-package failed in \(directory):\n\(message)" }
    }

    /// Every `.product(name:package:)` of the manifest's targets.
    static func productDependencies(of manifest: [String: Any]) -> [(name: String, package: String)] {
        let targets = manifest["targets"] as? [[String: Any]] ?? []
        return targets.flatMap { target -> [(name: String, package: String)] in
            let dependencies = target["dependencies"] as? [[String: Any]] ?? []
            return dependencies.compactMap { dependency in
                // SwiftPM's JSON: {"product": [name, package, moduleAliases, condition]}.
                guard let product = dependency["product"] as? [Any], product.count >= 2,
                      let name = product[0] as? String, let package = product[1] as? String else { return nil }
                return (name, package)
            }
        }
    }

    /// The names of the manifest's library products.
    static func libraries(of manifest: [String: Any]) -> Set<String> {
        let products = manifest["products"] as? [[String: Any]] ?? []
        return Set(products.compactMap { product in
            guard let type = product["type"] as? [String: Any], type["library"] != nil else { return nil }
            return product["name"] as? String
        })
    }
}

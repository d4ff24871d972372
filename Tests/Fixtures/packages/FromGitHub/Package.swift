// swift-tools-version: 6.0
// A program's manifest that depends on a LensDB release: the README and
// "Getting started" quote the lines between the markers, and
// ManifestExampleTests evaluates the whole of it with SwiftPM.
import PackageDescription

let package = Package(
    name: "MyApp",
    // article:begin README.md GettingStarted.md
    platforms: [.macOS(.v13), .iOS(.v16)],    // LensDB's minimums there; Linux has none
    dependencies: [
        .package(url: "https://github.com/lensdb/LensDB", from: "0.1.0"),
    ],
    targets: [
        .executableTarget(name: "MyApp", dependencies: [
            .product(name: "LensDB", package: "LensDB"),
        ]),
    ]
    // article:end
)

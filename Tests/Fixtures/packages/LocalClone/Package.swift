// swift-tools-version: 6.0
// The same manifest as FromGitHub's, against a clone of LensDB beside the
// program's package: the README and "Getting started" quote the line
// between the markers, and ManifestExampleTests evaluates the whole of it
// with SwiftPM.
import PackageDescription

let package = Package(
    name: "MyApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        // article:begin README.md GettingStarted.md
        .package(path: "../LensDB"),
        // article:end
    ],
    targets: [
        .executableTarget(name: "MyApp", dependencies: [
            .product(name: "LensDB", package: "LensDB"),
        ]),
    ]
)

// swift-tools-version: 6.0
// LensDB's benchmarks, kept out of the main package so that its users and its
// test suite never build benchmark-only dependencies. Run in release mode:
//   swift run -c release --package-path Tools/Benchmarks Benchmarks [workload…]
// Every workload measures LensDB and its baseline in the same run and prints
// ratios, because absolute times on shared machines are noise.

import PackageDescription

let package = Package(
    name: "LensDBBenchmarks",
    dependencies: [
        .package(name: "LensDB", path: "../.."),
        // SQLite through GRDB: the baseline of the table workloads (W1–W7),
        // measured in the same run. Only this package depends on it.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                .product(name: "LensDB", package: "LensDB"),
                .product(name: "LensLog", package: "LensDB"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ]
)

// swift-tools-version: 6.0
// Swift 6 language mode (the tools version's default): strict concurrency is on
// for every target, so data races are compile errors, not test flakes.

import PackageDescription

let package = Package(
    name: "LensDB",
    // Linux first; on Apple platforms the minimums are where Duration and
    // ContinuousClock (log options, open timing) begin: macOS 13, iOS 16.
    // What LensDB needs of Darwin itself is older: F_FULLFSYNC,
    // F_BARRIERFSYNC, F_PREALLOCATE and the Compression library's raw LZ4.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "LensDB", targets: ["LensDB"]),
        .library(name: "LensLog", targets: ["LensLog"]),
        .executable(name: "lensdb-demo", targets: ["lensdb-demo"]),
        .executable(name: "logtool", targets: ["logtool"]),
    ],
    dependencies: [
        // TreeDictionary: structurally shared maps, so every commit makes a new
        // version in O(log n) and readers keep old versions for free (promise 8).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // logtool's and the crash fuzzer's command lines.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // StoreOptions.logger: recovery, compaction, fail-stop and lock events
        // go to whatever logging backend the program has set up; the API
        // every server-side Swift library logs through. InMemoryLogging
        // captures the events in tests.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // AES-256-GCM and HKDF for encryption at rest (StoreOptions.encryptionKey):
        // Apple's CryptoKit API, backed by BoringSSL on Linux and by CryptoKit
        // itself on Apple platforms. Only LensDB links it: LensLog seals and
        // opens through its small PayloadCipher protocol, so logtool's log
        // layer, the libFuzzer targets (which compile LensLog's sources
        // directly, with a deterministic test cipher) and the log layer's
        // tests need no cryptography library. Both majors resolve: an app
        // that pins either keeps it.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `swift package generate-documentation`: builds the DocC catalog
        // (Sources/LensDB/LensDB.docc). .ci/run builds it with warnings as
        // errors, so a broken symbol or article link fails CI. Only a
        // command plugin: nothing of it is linked into LensDB.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // liblz4 from the system (Debian: liblz4-dev). The block API only.
        // Linux only: Apple platforms have no liblz4, and LZ4.swift uses the
        // Compression library's raw LZ4 there, which is the same block format.
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        // CRC32C with the SSE4.2 / ARMv8 instruction and a portable fallback;
        // C because Swift cannot name those intrinsics portably.
        .target(name: "CLensCRC"),
        // A cache prefetch hint for index walks, which reach rows scattered
        // over the heap; C for the same reason.
        .target(name: "CLensPrefetch"),
        // Storage seam, record framing, log writer/reader, snapshots. No Codable:
        // logtool and the fuzzers read any store without the program's types.
        .target(
            name: "LensLog",
            dependencies: [.target(name: "CLZ4", condition: .when(platforms: [.linux])), "CLensCRC"]
        ),
        // Values, engine, tables, queries, lens, consistency; the AES-GCM
        // cipher behind LensLog's PayloadCipher (Encryption/).
        .target(
            name: "LensDB",
            dependencies: [
                "LensLog",
                "CLensPrefetch",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Byte-corruption helpers, temporary directories and a reference model,
        // shared by the tests and the crash fuzzer.
        .target(name: "LensTestSupport", dependencies: ["LensLog", "LensDB"], path: "Tests/LensTestSupport"),
        // The README's main job: writes a store, reopens it, shows what is in it.
        .executableTarget(name: "lensdb-demo", dependencies: ["LensDB"], path: "Tools/lensdb-demo"),
        // The inspect-and-repair CLI: argument parsing and printing only; the
        // work is LensDB library code that tests call directly. LensLog for
        // `Locked`, which guards its progress line.
        .executableTarget(
            name: "logtool",
            dependencies: ["LensDB", "LensLog", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/logtool"
        ),
        // Crash-recovery fuzzer: random workloads on the simulated file system,
        // a power cut at every write/sync/rename boundary, a reference model.
        .executableTarget(
            name: "CrashFuzz",
            dependencies: ["LensDB", "LensTestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Fuzz/CrashFuzz"
        ),
        // A program that writes, compacts, reopens and crashes a store in a
        // process of its own: the live writer `logtool dump --follow` is
        // tested against.
        .executableTarget(name: "LiveWriter", dependencies: ["LensDB"], path: "Tests/LiveWriter"),
        .testTarget(name: "LensLogTests", dependencies: ["LensLog", "CLensCRC", "LensTestSupport"]),
        .testTarget(
            name: "LensDBTests",
            dependencies: ["LensDB", "LensTestSupport", .product(name: "InMemoryLogging", package: "swift-log")]
        ),
        // Runs the built logtool binary: output and exit codes; `dump
        // --follow` against LiveWriter, and into PostgreSQL when one is there.
        .testTarget(name: "LogtoolTests", dependencies: ["LensDB", "LensTestSupport", "logtool", "LiveWriter"]),
    ]
)

import ArgumentParser
import Foundation
import LensLog
import LensTestSupport

/// Runs random workloads on the simulated file system and cuts the power at
/// every mutating call of each (write, sync, truncate, rename, remove,
/// directory sync), with unsynced writes kept, dropped, torn or garbled, and
/// injects I/O errors; after each, reopens and checks the reference model.
/// Workloads run on plain stores and on encrypted ones whose key changes
/// among the steps; after a key change cut short, exactly one of the two
/// keys must open the store. Each seed also gets a migration workload
/// (``MigrationWorkload``), cut at every call of the open that migrates:
/// each migration must be run and recorded, or neither; and every fourth
/// seed a workload of typed tables with indexes (``TableCrashWorkload``),
/// whose snapshots store index orders.
@main
struct CrashFuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "CrashFuzz",
        abstract: "Crash-recovery fuzzer for LensDB: simulated power loss at every I/O boundary.",
        discussion: """
        Exits 0 when every crash point recovered to a prefix of the committed \
        transactions holding every acknowledged durable one; exits 1 and prints \
        the seed and cut point that replay a violation.

        Examples:
          CrashFuzz --seconds 60
          CrashFuzz --seconds 60 --encryption rotating
          CrashFuzz --seed 42 --ops 30 --cut 17 --encryption plain      (replay one crash point)
          CrashFuzz --seed 42 --cut 9 --workloads migrations               (replay one migration crash point)
          CrashFuzz --seed 42 --ops 30 --cut 9 --workloads tables          (replay one typed-table crash point)
        """)

    @Option(help: "Stop starting new workloads after this many seconds.")
    var seconds: Double = 10

    @Option(help: "Seed of the first workload (default: from the clock). Later workloads use seed+1, seed+2, ….")
    var seed: UInt64?

    @Option(help: "Steps (transactions, flushes, compactions) per workload.")
    var ops: Int = 30

    @Option(help: "Replay only this cut point of the first workload.")
    var cut: Int?

    @Option(help: "Stop after this many crash points (0: no limit).")
    var points: Int = 0

    @Option(help: "plain, rotating (encrypted, with key changes), or both: plain for even seeds, rotating for odd ones.")
    var encryption: String = "both"

    @Option(help: "stores (transactions, compactions, key changes), migrations, tables (typed tables with indexes, compactions, reopens), or all: each seed runs a migration and a store workload, every fourth seed a table workload too.")
    var workloads: String = "all"

    func validate() throws {
        guard ["stores", "migrations", "tables", "all"].contains(workloads) else {
            throw ValidationError("--workloads takes stores, migrations, tables or all, not \(workloads)")
        }
        guard encryption == "both" || CrashWorkload.Encryption(rawValue: encryption) != nil else {
            throw ValidationError("--encryption takes plain, rotating or both, not \(encryption)")
        }
    }

    /// The encryption of the workload of `seed`.
    func encryption(forSeed seed: UInt64) -> CrashWorkload.Encryption {
        CrashWorkload.Encryption(rawValue: encryption) ?? (seed % 2 == 0 ? .plain : .rotating)
    }

    mutating func run() throws {
        let first = seed ?? UInt64(Date().timeIntervalSince1970 * 1000)
        print("CrashFuzz: first workload seed \(first), \(ops) steps each")
        let started = Date()
        var tested = 0, workloadCount = 0
        var workloadSeed = first
        while Date().timeIntervalSince(started) < seconds && (points == 0 || tested < points) {
            if workloads == "all" || workloads == "migrations" { tested += try runMigrations(seed: workloadSeed) }
            if workloads == "tables" || (workloads == "all" && cut == nil && workloadCount % 4 == 3) {
                tested += try checkTables(seed: workloadSeed)
            }
            guard workloads == "all" || workloads == "stores" else {
                workloadCount += 1
                if cut != nil { break }
                workloadSeed &+= 1
                continue
            }
            let mode = encryption(forSeed: workloadSeed)
            let workload = CrashWorkload(seed: workloadSeed, steps: ops, encryption: mode)
            let cuts = cut.map { [$0] } ?? Array(0...CrashCheck.mutatingCalls(of: workload))
            for point in cuts {
                for (index, model) in [CrashModel.default, .tearAll, .keepAll].enumerated() {
                    let crashSeed = workloadSeed &* 31 &+ UInt64(point * 3 + index)
                    if let violation = CrashCheck.check(workload, cutPoint: point, crashSeed: crashSeed, model: model) {
                        print("\(violation) [crash model \(index)], found after \(tested) crash points")
                        print("replay: CrashFuzz --seed \(workloadSeed) --ops \(ops) --cut \(point) --encryption \(mode.rawValue) --workloads stores")
                        throw ExitCode(1)
                    }
                    tested += 1
                }
            }
            tested += try injectFaults(workload)
            workloadCount += 1
            if cut != nil { break }
            workloadSeed &+= 1
        }
        let elapsed = Date().timeIntervalSince(started)
        print("crash points tested: \(tested) in \(workloadCount) workloads, \(String(format: "%.0f", Double(tested) / elapsed)) points/s, no violation")
    }

    /// The migration workload of `seed`, cut at every call (or at ``cut``).
    private func runMigrations(seed: UInt64) throws -> Int {
        let workload = MigrationWorkload(seed: seed)
        let expected = try MigrationCrashCheck.expectedStates(workload)
        let cuts = try cut.map { [$0] } ?? Array(0...MigrationCrashCheck.mutatingCalls(of: workload))
        for point in cuts {
            for (index, model) in [CrashModel.default, .tearAll, .keepAll].enumerated() {
                let crashSeed = seed &* 37 &+ UInt64(point * 3 + index)
                if let violation = MigrationCrashCheck.check(workload, expected: expected, cutPoint: point, crashSeed: crashSeed, model: model) {
                    print("\(violation) [crash model \(index)]; migrations: \(workload.migrations)")
                    print("replay: CrashFuzz --seed \(seed) --cut \(point) --workloads migrations")
                    throw ExitCode(1)
                }
            }
        }
        return cuts.count * 3
    }

    /// A typed-table workload cut at every mutating call: the table holds a
    /// prefix with every durable transaction, and its indexes, stored-order
    /// ones included, answer as a scan does.
    private func checkTables(seed: UInt64) throws -> Int {
        let workload = TableCrashWorkload(seed: seed, steps: ops / 2)
        var tested = 0
        for point in cut.map({ [$0] }) ?? Array(0...workload.mutatingCalls()) {
            for (index, model) in [CrashModel.default, .tearAll, .keepAll].enumerated() {
                let outcome = workload.check(cut: point, model: model, crashSeed: seed &* 31 &+ UInt64(point * 3 + index))
                if let violation = outcome.violation {
                    print("\(violation) [typed tables, crash model \(index)], found after \(tested) crash points")
                    print("replay: CrashFuzz --seed \(seed) --ops \(ops) --cut \(point) --workloads tables")
                    throw ExitCode(1)
                }
                tested += 1
            }
        }
        return tested
    }

    /// Every kind of I/O error at the first few calls of each kind.
    private func injectFaults(_ workload: CrashWorkload) throws -> Int {
        var tested = 0
        let effects: [Fault.Effect] = [.noSpace, .ioError, .shortWrite(keepingBytes: 7), .failedSync]
        for effect in effects {
            for operation: StorageError.Operation in [.write, .sync, .rename, .syncDirectory, .truncate, .remove] {
                for nth in 1...4 {
                    let fault = Fault(effect, operations: [operation], trigger: .nthCall(nth))
                    if let violation = CrashCheck.check(workload, cutPoint: -1, crashSeed: workload.seed &+ UInt64(nth), fault: fault) {
                        print("\(violation) [fault \(effect) on \(operation) #\(nth), encryption \(encryption(forSeed: workload.seed).rawValue)]")
                        throw ExitCode(1)
                    }
                    tested += 1
                }
            }
        }
        return tested
    }
}

import ArgumentParser
import LensDB

struct Repair: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent store from everything that verifies, and say what was lost.",
        discussion: """
        Never edits its input: --output writes a new store; --in-place builds the \
        repaired store beside the original, then moves the original to \
        STORE.backup-<time> and says so. Takes the store's lock. Torn tails are cut, \
        records around damage kept (as a .salvage open), the lost LSN ranges \
        listed; the result is one snapshot and an empty log, and passes verify.

        Examples:
          logtool repair state.lensdb --output repaired.lensdb
          logtool repair state.lensdb --in-place
        """)

    @OptionGroup var options: CommonOptions

    @Option(help: "Where to write the repaired store (must not exist).")
    var output: String?

    @Flag(help: "Replace the store, keeping the original as a backup beside it.")
    var inPlace = false

    func validate() throws {
        guard (output != nil) != inPlace else { throw ValidationError("give exactly one of --output NEW and --in-place") }
    }

    func run() throws {
        let inspector = try options.inspector()
        let progress = ProgressLine("repair", options: options)
        defer { progress.finish() }
        let report = try output.map { try inspector.repair(to: $0, progress: progress.handler) }
            ?? inspector.repairInPlace(progress: progress.handler)
        progress.finish()
        if options.json { return try printJSON(report) }
        print("repaired store: \(report.output) (\(report.entries) items, last LSN \(report.lastLSN), \(report.recordsReplayed) log records kept)")
        if let backup = report.backup { print("original moved to: \(backup)") }
        if options.quiet { return }
        if report.tornBytes > 0 { print("cut \(report.tornBytes) bytes of torn tails (unsynced writes of a crash)") }
        print(report.lost.isEmpty ? "no transaction lost" : "transactions lost:")
        for range in report.lost { print("  \(range)") }
        if !report.damagedSnapshots.isEmpty { print("damaged snapshots (salvaged chunk by chunk where the logs could not replace them):") }
        for snapshot in report.damagedSnapshots { print("  \(snapshot)") }
    }
}

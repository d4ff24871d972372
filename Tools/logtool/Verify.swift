import ArgumentParser
import LensDB

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read every byte and check every checksum, LSN and value; end with OK or N problems found.",
        discussion: """
        Torn tails are notes, not problems: a crash cuts unsynced writes, and open \
        drops them quietly. So are logs orphaned past a torn point and tails that an \
        open after a crash wrote again. Exit code 0 with OK, 1 with N problems found.

        Examples:
          logtool verify state.lensdb
          logtool verify state.lensdb --json --quiet
        """)

    @OptionGroup var options: CommonOptions

    func run() throws {
        let progress = ProgressLine("verify", options: options)
        defer { progress.finish() }
        let report = try options.inspector().verify(progress: progress.handler)
        progress.finish()
        if options.json {
            try printJSON(report)
        } else {
            if !options.quiet {
                for note in report.notes { print("note: \(note)") }
                for problem in report.problems { print("problem: \(problem)") }
                print("checked \(report.bytesRead) bytes, \(report.recordsChecked) records, \(report.valuesChecked) values")
            }
            print(report.isOK ? "OK" : "\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") found")
        }
        if !report.isOK { throw ExitCode(1) }
    }
}

import ArgumentParser
import LensDB

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compact a closed store: one snapshot replaces its logs. Takes the store's lock.",
        discussion: """
        Refuses, with exit code 1 and the holder's process id, while another \
        process has the store open.

        Example:
          logtool compact state.lensdb
        """)

    @OptionGroup var options: CommonOptions

    func run() throws {
        let progress = ProgressLine("compact", options: options)
        defer { progress.finish() }
        let report = try StoreInspector(path: options.store).compact(progress: progress.handler)
        progress.finish()
        if options.json { return try printJSON(report) }
        if options.quiet { return }
        let size = report.files.filter { $0.role == .snapshot }.reduce(Int64(0)) { $0 + $1.size }
        print("compacted \(report.path): snapshot of \(size) bytes through LSN \(report.lastLSN)")
    }
}

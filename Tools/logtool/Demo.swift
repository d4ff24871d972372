import ArgumentParser
import LensDB

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a small sample store (two tables and a root document) to try logtool on.",
        discussion: """
        Example:
          logtool demo /tmp/sample.lensdb && logtool dump /tmp/sample.lensdb
        """)

    @OptionGroup var options: CommonOptions

    func run() throws {
        let lsn = try DemoStore.write(at: options.store, key: options.key())
        if options.json { return try printJSON(DemoReport(store: options.store, lastLSN: lsn)) }
        if options.quiet { return }
        print("wrote a sample store at \(options.store) (last LSN \(lsn)); try: logtool info \(options.store)")
    }
}

/// What `logtool demo --json` prints.
struct DemoReport: Encodable {
    var store: String
    var lastLSN: UInt64
}

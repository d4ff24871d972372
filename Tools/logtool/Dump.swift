import ArgumentParser
import LensDB

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each transaction (or the snapshot's state), keys and values shown as their table's encoding says.",
        discussion: """
        Shows the transactions open would replay, in LSN order: damaged records are \
        skipped as salvage would (`logtool verify` reports them), logs the snapshot \
        covers are left out. Each table records how it is encoded: raw bytes show \
        as hex with their ASCII (0x6b31 "k1"), ordered keys decoded (people[42], \
        people["alice"], a UUID as its string), values in the value format as JSON; \
        tables of stores written before encodings were recorded show as bytes. With \
        --json, one JSON object a line; a key or value is {"encoding": ..., "json": ...} \
        or {"encoding": ..., "hex": ..., "ascii": ...}, plus "problem" where bytes \
        break their table's encoding.

        Examples:
          logtool dump state.lensdb --from 100 --to 120
          logtool dump state.lensdb --table people --json
          logtool dump state.lensdb --snapshot
        """)

    @OptionGroup var options: CommonOptions

    @Option(help: "The first LSN to print.")
    var from: UInt64 = 0

    @Option(help: "The last LSN to print.")
    var to: UInt64 = .max

    @Option(help: "Only transactions (or snapshot entries) of this table.")
    var table: String?

    @Flag(help: "Dump the newest valid snapshot's state instead of the logs.")
    var snapshot = false

    func validate() throws {
        guard from <= to else { throw ValidationError("--from \(from) is after --to \(to)") }
    }

    func run() throws {
        let inspector = StoreInspector(path: options.store)
        if snapshot {
            try inspector.dumpSnapshot(table: table) { item in
                if options.json { try printJSON(item, pretty: false); return }
                let target = item.table.map { "\($0)[\(item.key?.text ?? "")]" } ?? "root \(item.root ?? "")"
                print("\(target) = \(item.value.text)")
            }
            return
        }
        let progress = ProgressLine("dump", options: options, stdoutShowsOutput: true)
        defer { progress.finish() }
        try inspector.dump(from: from, to: to, table: table, progress: progress.handler) { transaction in
            if options.json { try printJSON(transaction, pretty: false); return }
            print("LSN \(transaction.lsn)  \(transaction.file) @ \(transaction.offset) (\(transaction.size) bytes)")
            if let problem = transaction.problem { print("  ! \(problem)") }
            for operation in transaction.operations {
                print("  \(operation.text)")
            }
        }
    }
}

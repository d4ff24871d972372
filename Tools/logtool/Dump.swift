import ArgumentParser
import Foundation
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

        With --follow, dump keeps printing each transaction a program commits \
        to the store, across compactions and reopens, from --from or else from \
        the end, until SIGINT, SIGTERM or --until. A transaction is printed once \
        the store has proven it durable (a later record, a snapshot, a clean close \
        or logtool's own sync of the log say so), so nothing printed is lost by a \
        crash: after one, follow again from the last LSN printed + 1.

        Examples:
          logtool dump state.lensdb --from 100 --to 120
          logtool dump state.lensdb --table people --json
          logtool dump state.lensdb --snapshot
          logtool dump state.lensdb --follow --json | kafka-console-producer.sh --topic state
        """)

    @OptionGroup var options: CommonOptions

    @Option(help: "The first LSN to print (with --follow, default: the first one after what the store holds now).")
    var from: UInt64?

    @Option(help: "The last LSN to print.")
    var to: UInt64 = .max

    @Option(help: "Only transactions (or snapshot entries) of this table.")
    var table: String?

    @Flag(help: "Dump the newest valid snapshot's state instead of the logs.")
    var snapshot = false

    @Flag(help: "Keep printing transactions as they are committed, until SIGINT, SIGTERM or --until.")
    var follow = false

    @Option(help: "With --follow: stop after printing this LSN.")
    var until: UInt64?

    @Option(help: "With --follow: seconds between two looks at the store.")
    var interval: Double = 0.1

    func validate() throws {
        guard (from ?? 0) <= to else { throw ValidationError("--from \(from ?? 0) is after --to \(to)") }
        guard follow || until == nil else { throw ValidationError("--until needs --follow (without it, use --to)") }
        guard !follow || (!snapshot && to == .max) else {
            throw ValidationError("--follow prints transactions as they come: it takes --until, not --to or --snapshot")
        }
        guard interval > 0 && interval <= 3600 else { throw ValidationError("--interval must be between 0 and 3600 seconds") }
        if let from, let until, from > until { throw ValidationError("--from \(from) is after --until \(until)") }
    }

    func run() throws {
        let inspector = try options.inspector()
        if snapshot {
            try inspector.dumpSnapshot(table: table) { item in
                if options.json { try printJSON(item, pretty: false); return }
                let target = item.table.map { "\($0)[\(item.key?.text ?? "")]" } ?? "root \(item.root ?? "")"
                print("\(target) = \(item.value.text)")
            }
            return
        }
        if follow {
            let stop = StopSignals()
            try inspector.follow(
                from: from, until: until ?? .max, table: table, interval: .milliseconds(Int64(interval * 1000)),
                shouldStop: { stop.requested }
            ) { transaction in
                try show(transaction)
                // A consumer at the other end of a pipe sees each transaction as soon as it is printed.
                fflush(nil)
            }
            return
        }
        let progress = ProgressLine("dump", options: options, stdoutShowsOutput: true)
        defer { progress.finish() }
        try inspector.dump(from: from ?? 0, to: to, table: table, progress: progress.handler, show)
    }

    private func show(_ transaction: DumpedTransaction) throws {
        if options.json { try printJSON(transaction, pretty: false); return }
        print("LSN \(transaction.lsn)  \(transaction.file) @ \(transaction.offset) (\(transaction.size) bytes)")
        if let problem = transaction.problem { print("  ! \(problem)") }
        for operation in transaction.operations {
            print("  \(operation.text)")
        }
    }
}

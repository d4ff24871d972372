import ArgumentParser
import LensDB

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compact a closed store: one snapshot replaces its logs. Takes the store's lock.",
        discussion: """
        Refuses, with exit code 1 and the holder's process id, while another \
        process has the store open.

        With --new-key-file, the compaction writes the store under a new key: it \
        encrypts a plain store, or re-keys an encrypted one (read with --key-file). \
        With --decrypt, it writes the store plain. A crash leaves the store readable \
        with the old key until the new log is in place, then with the new one.

        Examples:
          logtool compact state.lensdb
          logtool compact state.lensdb --key-file old.key --new-key-file new.key
        """)

    @OptionGroup var options: CommonOptions

    @Option(help: ArgumentHelp("Write the store under this key (a file like --key-file's).", valueName: "file"))
    var newKeyFile: String?

    @Flag(help: "Write the store unencrypted (read it with --key-file).")
    var decrypt = false

    func validate() throws {
        guard newKeyFile == nil || !decrypt else { throw ValidationError("give at most one of --new-key-file and --decrypt") }
    }

    func run() throws {
        let progress = ProgressLine("compact", options: options)
        defer { progress.finish() }
        let inspector = try options.inspector()
        let report = try newKeyFile != nil || decrypt
            ? inspector.changeKey(to: newKeyFile.map { try EncryptionKey(keyFile: $0) }, progress: progress.handler)
            : inspector.compact(progress: progress.handler)
        progress.finish()
        if options.json { return try printJSON(report) }
        if options.quiet { return }
        let size = report.files.filter { $0.role == .snapshot }.reduce(Int64(0)) { $0 + $1.size }
        print("compacted \(report.path): snapshot of \(size) bytes through LSN \(report.lastLSN), encryption: \(report.encryption)")
    }
}

import ArgumentParser
import Foundation
import LensDB

/// `logtool`: argument parsing and printing only; the work is LensDB's
/// `StoreInspector`, which the tests call directly.
struct LogTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logtool",
        abstract: "Inspect, verify, repair and compact LensDB stores.",
        discussion: """
        Reading subcommands (info, dump, verify) never take the store's lock and \
        never change a file, so they are safe while a program writes the store. \
        repair and compact take the lock and refuse while another process holds it.

        An encrypted store needs its key: every subcommand takes --key-file, and \
        refuses an encrypted store without it (or with another key), naming the \
        key id the store needs.

        Exit codes: 0 success; 1 problems found or the operation failed; 2 usage error.

        Examples:
          logtool demo /tmp/sample.lensdb
          logtool info /tmp/sample.lensdb
          logtool dump /tmp/sample.lensdb --table people --json
          logtool verify /tmp/sample.lensdb
          logtool repair /tmp/sample.lensdb --output /tmp/repaired.lensdb
          logtool verify /tmp/secret.lensdb --key-file /tmp/secret.key
        """,
        subcommands: [Info.self, Dump.self, Verify.self, Repair.self, Compact.self, Demo.self])

    /// No subcommand is a usage error: the help goes to stderr, exit code 2.
    func run() throws {
        FileHandle.standardError.write(Data(LogTool.helpMessage().utf8))
        throw ExitCode(2)
    }
}

/// Maps outcomes to logtool's documented exit codes.
@main
enum Main {
    static func main() {
        do {
            var command = try LogTool.parseAsRoot()
            try command.run()
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            let code = LogTool.exitCode(for: error)
            if code == .success {
                print(LogTool.fullMessage(for: error))
                exit(0)
            }
            if code == .validationFailure || error is ValidationError {
                FileHandle.standardError.write(Data((LogTool.fullMessage(for: error) + "\n").utf8))
                exit(2)
            }
            FileHandle.standardError.write(Data("logtool: \(error)\n".utf8))
            exit(1)
        }
    }
}

/// The options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Argument(help: "The store's directory.")
    var store: String

    @Flag(help: "Print JSON (JSON lines for dump) instead of text.")
    var json = false

    @Flag(help: "No progress and no details: errors and the result line only (verify: OK or N problems found).")
    var quiet = false

    @Option(help: ArgumentHelp(
        "The key of an encrypted store: a file of its 32 bytes, raw or as 64 hex digits.",
        discussion: "Required for an encrypted store, refused for a plain one.", valueName: "file"))
    var keyFile: String?

    /// The key `--key-file` names, read as the library reads key files.
    func key() throws -> EncryptionKey? {
        try keyFile.map { try EncryptionKey(keyFile: $0) }
    }

    /// The library behind every subcommand, for this store and key.
    func inspector() throws -> StoreInspector {
        StoreInspector(path: store, key: try key())
    }
}

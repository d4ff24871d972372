import Foundation
import LensDB

/// Prints a report as JSON.
func printJSON<T: Encodable>(_ value: T, pretty: Bool = true) throws {
    print(try inspectionJSON(value, pretty: pretty))
}

/// Progress on stderr, only when stderr is a terminal and not `--quiet`:
/// bytes done of total, rate, and time left.
struct Progress {
    let label: String
    let enabled: Bool
    let started = Date()

    init(_ label: String, quiet: Bool) {
        self.label = label
        enabled = !quiet && isatty(STDERR_FILENO) != 0
    }

    func update(_ done: Int64, of total: Int64) {
        guard enabled, total > 0 else { return }
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        let left = rate > 0 ? Double(total - done) / rate : 0
        let line = String(format: "\r%@: %.1f of %.1f MB, %.1f MB/s, %.0f s left ", label,
                          Double(done) / 1e6, Double(total) / 1e6, rate / 1e6, left)
        FileHandle.standardError.write(Data(line.utf8))
        if done >= total { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

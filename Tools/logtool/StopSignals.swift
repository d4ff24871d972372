import Dispatch
import Foundation
import LensLog

/// SIGINT and SIGTERM, turned into a flag that `dump --follow` checks
/// between two looks at the store, so that it stops after a whole line,
/// with everything printed flushed, and exits 0.
///
/// The signals' default action (ending the process at once) is replaced
/// for the life of the process; a dispatch source sees them instead, so
/// nothing runs inside a signal handler.
final class StopSignals {
    private let flag = Locked(false)
    /// Kept so that the sources live as long as this object.
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        let flag = flag
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue.global())
            source.setEventHandler { flag.withLock { $0 = true } }
            source.resume()
            return source
        }
    }

    /// Whether one of the signals arrived.
    var requested: Bool { flag.withLock { $0 } }
}

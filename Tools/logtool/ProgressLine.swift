import Foundation
import LensDB
import LensLog

/// logtool's one progress printer, shared by verify, dump, repair and compact.
///
/// A single line on stderr, redrawn in place at most ten times a second:
/// `repair: reading 12.3 of 45.6 MB, 10.1 MB/s, 3 s left`. It is shown only
/// when stderr is a terminal and neither `--json` nor `--quiet` is given
/// (and, for dump, only when stdout is not that terminal too, since the
/// dump itself goes there); it appears only once the operation has run for
/// `LOGTOOL_PROGRESS_DELAY` seconds (default 0.3), so a small store shows
/// none, and it is erased when the operation ends.
struct ProgressLine: Sendable {
    private let label: String
    private let state: Locked<State>?
    private let delay: Double

    private struct State {
        let started = Date()
        var phase: InspectionProgress.Phase?
        var phaseStarted = Date()
        var drawn: Date?
    }

    /// - Parameter stdoutShowsOutput: the command prints its result while it
    ///   runs, so a progress line on the same terminal would break it up.
    init(_ label: String, options: CommonOptions, stdoutShowsOutput: Bool = false) {
        self.label = label
        let shown = !options.json && !options.quiet && isatty(STDERR_FILENO) != 0
            && !(stdoutShowsOutput && isatty(STDOUT_FILENO) != 0)
        state = shown ? Locked(State()) : nil
        delay = ProcessInfo.processInfo.environment["LOGTOOL_PROGRESS_DELAY"].flatMap(Double.init) ?? 0.3
    }

    /// What to pass to the library: nil when no line is shown, so that the
    /// library does not even measure the files.
    var handler: ProgressHandler? {
        guard state != nil else { return nil }
        return { progress in self.draw(progress) }
    }

    /// Erases the line, if one is drawn. Called before the result is
    /// printed, and again (doing nothing then) when the command throws.
    func finish() {
        let drawn = state?.withLock { state in
            defer { state.drawn = nil }
            return state.drawn != nil
        }
        guard drawn == true else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    private func draw(_ progress: InspectionProgress) {
        guard let state else { return }
        let now = Date()
        let line: String? = state.withLock { state in
            if state.phase != progress.phase {
                state.phase = progress.phase
                state.phaseStarted = now
            }
            guard now.timeIntervalSince(state.started) >= delay else { return nil }
            if let drawn = state.drawn, now.timeIntervalSince(drawn) < 0.1, progress.done < progress.total { return nil }
            state.drawn = now
            return text(progress, elapsed: max(now.timeIntervalSince(state.phaseStarted), 0.001))
        }
        if let line { FileHandle.standardError.write(Data("\r\(line)\u{1B}[K".utf8)) }
    }

    private func text(_ progress: InspectionProgress, elapsed: Double) -> String {
        let rate = Double(progress.done) / elapsed
        let left = rate > 0 ? Double(progress.total - progress.done) / rate : 0
        switch progress.phase {
        case .reading where progress.total < 1_000_000:
            return String(format: "%@: reading %.0f of %.0f KB, %.0f s left", label,
                          Double(progress.done) / 1e3, Double(progress.total) / 1e3, left)
        case .reading:
            return String(format: "%@: reading %.1f of %.1f MB, %.1f MB/s, %.0f s left", label,
                          Double(progress.done) / 1e6, Double(progress.total) / 1e6, rate / 1e6, left)
        case .writingSnapshot:
            return String(format: "%@: writing the snapshot, %lld of %lld items, %.0f s left", label,
                          progress.done, progress.total, left)
        }
    }
}

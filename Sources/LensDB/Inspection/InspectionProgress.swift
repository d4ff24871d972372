import LensLog

/// How far a long `StoreInspector` operation (verify, dump, repair,
/// compact) has got: what `logtool` turns into a progress line.
///
/// An operation goes through one or two phases: reading the store's files
/// (counted in bytes) and, for repair and compact, writing the new snapshot
/// (counted in items). Within a phase `done` never decreases, and the last
/// report of a phase that finishes has `done == total`; a read that met a
/// store changing under it and is done again starts its phase again.
public struct InspectionProgress: Sendable, Equatable {
    public enum Phase: String, Sendable, Equatable {
        /// Reading snapshots and logs; counted in bytes of the files.
        case reading
        /// Writing the new snapshot; counted in table entries and root documents.
        case writingSnapshot = "writing the snapshot"
    }

    public var phase: Phase
    public var done: Int64
    public var total: Int64

    public init(phase: Phase, done: Int64, total: Int64) {
        self.phase = phase
        self.done = done
        self.total = total
    }
}

/// Where an operation reports its progress; nil reports nothing.
public typealias ProgressHandler = @Sendable (InspectionProgress) -> Void

/// Counts one phase and passes it on about 200 times at most, so that a
/// caller can report every record or item without the handler's cost
/// showing.
struct ProgressCounter {
    let phase: InspectionProgress.Phase
    let total: Int64
    let handler: ProgressHandler?
    private let step: Int64
    private var reported: Int64 = 0

    init(_ phase: InspectionProgress.Phase, total: Int64, handler: ProgressHandler?) {
        self.phase = phase
        self.total = total
        self.handler = handler
        step = max(total / 200, 1)
    }

    /// Reports `done` if it moved by a step since the last report.
    mutating func update(_ done: Int64) {
        guard let handler, done >= reported + step, done <= total else { return }
        reported = done
        handler(InspectionProgress(phase: phase, done: done, total: total))
    }

    /// Reports the phase as done.
    mutating func finish() {
        guard let handler, reported < total else { return }
        reported = total
        handler(InspectionProgress(phase: phase, done: total, total: total))
    }
}

/// Progress of reading a store's files in the order recovery reads them:
/// the snapshot, then the logs, each record's end as a position.
struct ReadingProgress {
    private var counter: ProgressCounter
    private let sizes: [String: Int64]
    private var finished: Int64 = 0
    private var current: String?

    /// Progress over the snapshots and logs of `listing`. Without a
    /// handler it costs nothing: not even the files' sizes are read.
    init(_ listing: StoreDirectory.Listing, fileSystem: any FileSystem, handler: ProgressHandler?) {
        var sizes: [String: Int64] = [:]
        if handler != nil {
            for file in listing.snapshots + listing.logs { sizes[file.path] = size(of: file.path, in: fileSystem) }
        }
        self.sizes = sizes
        counter = ProgressCounter(.reading, total: sizes.values.reduce(0, +), handler: handler)
    }

    /// A snapshot read whole.
    mutating func read(snapshot path: String) {
        moveOn(to: path)
        counter.update(finished + (sizes[path] ?? 0))
    }

    /// A record of `file` read up to its end.
    mutating func read(_ record: LogRecord, in file: String) {
        moveOn(to: file)
        counter.update(finished + record.offset + Int64(record.frameSize))
    }

    mutating func finish() { counter.finish() }

    /// Files are read one after another: starting one finishes the last.
    private mutating func moveOn(to file: String) {
        guard file != current else { return }
        if let current { finished += sizes[current] ?? 0 }
        current = file
    }
}

/// The size of `file`, or 0 when it cannot be opened or measured: it only
/// scales progress, and reading the file reports the failure with its path.
func size(of file: String, in fileSystem: any FileSystem) -> Int64 {
    // As said: a file that cannot be opened counts as empty here.
    guard let handle = try? fileSystem.openFile(at: file, mode: .readOnly) else { return 0 }
    defer { handle.close() }
    // As said: the size only scales the progress display.
    return (try? handle.size()) ?? 0
}

/// The bytes of one log file as ``LogReader`` sees them: the whole file when
/// it was handed over in memory, else a bounded window that positional reads
/// refill as the reader moves on.
///
/// A window holds ``defaultSize`` bytes, or one record when a record is
/// larger (up to ``LogFormat/maxPayloadSize``); the next refill shrinks it
/// back. So opening a store costs memory for its state and one window, not
/// for its logs (issue 10: a 1 GiB log opens within 64 MiB above the state).
///
/// The file's length is taken once, when the reader opens it: bytes a live
/// writer appends beyond it later are not read. A writer also fills its
/// preallocated zeros within that length, so two reads of one region may
/// differ: ``LogReader`` reads damage again before judging it
/// (``parseFrameAgain(at:seed:)``).
/// A value type: a copy (``LogReader/vouches(for:)`` reads ahead on one)
/// shares the file and refills its own buffer.
struct LogWindow: Sendable {
    /// Large enough that a refill costs little next to checking the records
    /// it brings, small enough to be noise next to any state worth a log.
    static let defaultSize = 1 << 20

    let path: String
    /// The file's length when it was opened: the end of everything read.
    let count: Int
    private let source: Source
    private let windowSize: Int
    /// Bytes laid over the start of the file: a header assumed for salvage.
    private let overlay: [UInt8]
    /// The file offset of `buffer[0]`.
    private(set) var base = 0
    private(set) var buffer: [UInt8]

    private enum Source: Sendable {
        case memory
        /// The reader opened the file itself when `owned` is set, and the
        /// last copy of it closes the file.
        case file(any StoredFile, owned: FileCloser?)
    }

    /// The whole log, already in memory.
    init(bytes: [UInt8], path: String) {
        self.path = path
        count = bytes.count
        source = .memory
        windowSize = bytes.count
        overlay = []
        buffer = bytes
    }

    /// A window over `file`, which the caller keeps open (and closes) unless
    /// `closingWhenDone`. With `overlay`, the file reads as if it started
    /// with those bytes, and is at least that long.
    init(file: any StoredFile, path: String, windowSize: Int, overlay: [UInt8] = [], closingWhenDone: Bool) throws {
        precondition(windowSize >= LogFormat.maxFileHeaderSize + LogFormat.frameHeaderSize, "a log window must hold a header and a frame header")
        self.path = path
        count = max(Int(try file.size()), overlay.count)
        source = .file(file, owned: closingWhenDone ? FileCloser(file) : nil)
        self.windowSize = windowSize
        self.overlay = overlay
        buffer = []
        try load(0, windowSize).get()
    }

    /// The offset just past the resident bytes.
    var end: Int { base + buffer.count }

    /// Makes `[offset, offset + length)` resident, cut at ``count``. Reads
    /// only when some of it is not: one window from `offset`, or the whole
    /// range when it is longer than a window.
    mutating func ensure(_ offset: Int, _ length: Int) throws(LogError) {
        let wanted = min(offset + length, count)
        guard offset < base || wanted > end else { return }
        if case .failure(let error) = load(offset, max(length, windowSize)) {
            throw .readFailed(file: path, cause: error)
        }
    }

    private mutating func load(_ offset: Int, _ length: Int) -> Result<Void, StorageError> {
        guard case .file(let file, _) = source else { return .success(()) }
        let wanted = max(0, min(offset + length, count) - offset)
        var fresh: [UInt8]
        do {
            fresh = try file.read(at: Int64(offset), count: wanted)
        } catch let error as StorageError {
            return .failure(error)
        } catch {
            // StoredFile documents StorageError as the only thing it throws.
            return .failure(StorageError(.ioError, .read, path: path))
        }
        // A file that shrank since it was opened reads as zeros, as a
        // preallocated end does; an overlay is longer than a cut file.
        if fresh.count < wanted { fresh += repeatElement(0, count: wanted - fresh.count) }
        if offset < overlay.count {
            let patched = offset..<min(overlay.count, offset + wanted)
            fresh.replaceSubrange((patched.lowerBound - offset)..<(patched.upperBound - offset), with: overlay[patched])
        }
        buffer = fresh
        base = offset
        return .success(())
    }

    /// Calls `body` with the resident bytes and the file offset of the first.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer, _ base: Int) throws(LogError) -> R) throws(LogError) -> R {
        try buffer.withUnsafeBytes { raw in Result { () throws(LogError) in try body(raw, base) } }.get()
    }

    /// Makes the frame at `offset` resident — its header and, when its
    /// length field is within the format's cap, its payload — and parses it.
    /// Because the window then reaches the frame's end or the file's, the
    /// parser's "fewer bytes remain" means the file's end, as in memory.
    mutating func parseFrame(at offset: Int, seed: UInt32) throws(LogError) -> RecordFrame.Parsed {
        try ensure(offset, LogFormat.frameHeaderSize)
        if count - offset >= LogFormat.frameHeaderSize {
            let length = Int(buffer.withUnsafeBytes { $0.littleEndian(at: offset - base, as: UInt32.self) })
            if length <= LogFormat.maxStoredSize { try ensure(offset, LogFormat.frameHeaderSize + length) }
        }
        return buffer.withUnsafeBytes { RecordFrame.parse($0, at: offset - base, seed: seed) }
    }

    /// ``parseFrame(at:seed:)`` from a fresh read of the file, not from the
    /// resident bytes: what a live writer has written there since they were
    /// read. The same parse for a log held in memory.
    mutating func parseFrameAgain(at offset: Int, seed: UInt32) throws(LogError) -> RecordFrame.Parsed {
        if case .file = source {
            // Nothing resident: the next `ensure` reads.
            base = count
            buffer = []
        }
        return try parseFrame(at: offset, seed: seed)
    }

    /// The payload of a frame `parseFrame` just verified at `offset`.
    func payload(of frame: RecordFrame.Header, at offset: Int, opening: RecordFrame.Opening?) -> RecordFrame.Payload {
        buffer.withUnsafeBytes { RecordFrame.payload(of: frame, in: $0, at: offset - base, opening: opening) }
    }

    /// The offset of the last byte at or after `floor` that is not zero.
    /// Read backwards a window at a time, so a clean end followed by a
    /// preallocated zero region costs one pass over that region.
    mutating func lastNonZero(atOrAfter floor: Int) throws(LogError) -> Int? {
        var chunkEnd = count
        while chunkEnd > floor {
            let chunkStart = max(floor, chunkEnd - windowSize)
            try ensure(chunkStart, chunkEnd - chunkStart)
            let found = buffer.withUnsafeBytes { raw in
                raw[(chunkStart - base)..<(chunkEnd - base)].lastIndex(where: { $0 != 0 })
            }
            if let found { return found + base }
            chunkEnd = chunkStart
        }
        return nil
    }

    /// How many bytes of the file are not zero.
    mutating func nonZeroCount() throws(LogError) -> Int {
        var total = 0
        var offset = 0
        while offset < count {
            try ensure(offset, windowSize)
            let upTo = min(end, count)
            total += buffer.withUnsafeBytes { raw in raw[(offset - base)..<(upTo - base)].count { $0 != 0 } }
            offset = upTo
        }
        return total
    }
}

/// Closes a file a reader opened for itself once the last copy of the reader is gone.
final class FileCloser: Sendable {
    let file: any StoredFile
    init(_ file: any StoredFile) { self.file = file }
    deinit { file.close() }
}

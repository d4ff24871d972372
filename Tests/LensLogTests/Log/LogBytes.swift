@testable import LensLog

/// Builds log files in memory, byte for byte as the writer frames them.
struct LogBytes {
    var bytes: [UInt8]
    var offsets: [Int] = []
    let generation: UInt64
    let seed: UInt32
    private(set) var nextLSN: UInt64

    init(generation: UInt64 = 1, firstLSN: UInt64 = 1) {
        self.generation = generation
        bytes = LogFileHeader(generation: generation, firstLSN: firstLSN).encoded()
        seed = RecordFrame.seed(generation: generation)
        nextLSN = firstLSN
    }

    /// Appends a record. `syncedLSN` defaults to "every earlier record was
    /// synced", as with `.full` commits one at a time.
    mutating func append(_ payload: [UInt8], compress: Bool = true, syncedLSN: UInt64? = nil, lsn: UInt64? = nil) {
        let (stored, flags) = RecordFrame.store(payload, compress: compress)
        offsets.append(bytes.count)
        let recordLSN = lsn ?? nextLSN
        RecordFrame.append(
            to: &bytes, stored: stored, type: .transaction, flags: flags,
            lsn: recordLSN, syncedLSN: syncedLSN ?? recordLSN - 1, seed: seed)
        nextLSN = recordLSN + 1
    }

    /// The small golden log used by the every-byte tests: empty, short,
    /// compressible and incompressible payloads.
    static func golden() -> (log: LogBytes, payloads: [[UInt8]]) {
        let payloads: [[UInt8]] = [
            Array("alice".utf8),
            [],
            [UInt8](repeating: 0x41, count: 200),
            (0..<90).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) },
            Array("the last record".utf8),
        ]
        var log = LogBytes(generation: 7, firstLSN: 100)
        for payload in payloads { log.append(payload) }
        return (log, payloads)
    }
}

/// Reads every record and the end, or the error that stopped reading.
func readAll(_ bytes: [UInt8], policy: RecoveryPolicy = .strict) -> (records: [LogRecord], end: LogEnd?, dropped: [DroppedRange], error: LogError?) {
    var records: [LogRecord] = []
    do {
        var reader = try LogReader(bytes: bytes, path: "test.log", policy: policy)
        while let record = try reader.next() { records.append(record) }
        return (records, reader.end, reader.dropped, nil)
    } catch {
        return (records, nil, [], error)
    }
}

import LensTestSupport
import Testing
@_spi(Testing) @testable import LensLog

/// A reader on a file streams it through a bounded window. These tests read
/// the same bytes whole and through small windows — so that records, damage
/// and the search for proof after damage cross window boundaries — and
/// expect the same records, the same end and the same errors.
@Suite struct LogReaderWindowTests {
    /// The smallest window a reader takes: a file header and a frame header.
    static let smallest = LogFormat.maxFileHeaderSize + LogFormat.frameHeaderSize

    @Test func everyByteFlippedReadsAlikeThroughSmallWindows() throws {
        let (log, _) = LogBytes.golden()
        for index in log.bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = log.bytes
                damaged[index] ^= mask
                for window in [Self.smallest, 100, 150] {
                    for policy in [RecoveryPolicy.strict, .salvage] {
                        try expectAlike(damaged, window: window, policy: policy, "flip \(index) ^ \(mask), window \(window)")
                    }
                }
            }
        }
    }

    @Test func logCutAtEveryByteReadsAlikeThroughSmallWindows() throws {
        let (log, _) = LogBytes.golden()
        for cut in 0...log.bytes.count {
            for window in [Self.smallest, 77, 128] {
                try expectAlike(Array(log.bytes[..<cut]), window: window, policy: .strict, "cut at \(cut), window \(window)")
            }
        }
    }

    @Test func recordsLargerThanTheWindowAndAZeroFilledEndReadAlike() throws {
        var random = SeededGenerator.fromEnvironment("recordsLargerThanTheWindow")
        var log = LogBytes(generation: 4, firstLSN: 1)
        for index in 0..<60 {
            let size = [0, 10, 300, 5000, 70_000][index % 5]
            log.append(index % 2 == 0 ? random.bytes(size) : [UInt8](repeating: 7, count: size), compress: index % 3 == 0)
        }
        let whole = log.bytes.count
        log.bytes += [UInt8](repeating: 0, count: 50_000)
        let result = try expectAlike(log.bytes, window: 1024, policy: .strict, "large records")
        #expect(result.records.count == 60)
        #expect(result.end == .clean(offset: Int64(whole)))
    }

    @Test func damageStraddlingAWindowBoundaryIsCorruptionOrSalvagedAlike() throws {
        var log = LogBytes(generation: 2, firstLSN: 1)
        for lsn in 1...200 { log.append(Array("record \(lsn) ".utf8) + [UInt8](repeating: UInt8(lsn), count: 40)) }
        let window = 512
        // Damage across the boundary at 4 windows, in the middle of the log:
        // records after it vouch for it, so it is corruption.
        var damaged = log.bytes
        for index in (4 * window - 20)..<(4 * window + 20) { damaged[index] ^= 0x5A }
        let strict = try expectAlike(damaged, window: window, policy: .strict, "straddling damage")
        guard case .corruption? = strict.error else {
            Issue.record("expected corruption, got \(String(describing: strict.error)) \(String(describing: strict.end))")
            return
        }
        let salvaged = try expectAlike(damaged, window: window, policy: .salvage, "straddling damage, salvage")
        #expect(salvaged.dropped.count == 1)
        #expect(salvaged.records.count + salvaged.dropped.map(\.lostLSNs.count).reduce(0, +) == 200)
    }

    @Test func tornTailWhoseVouchingRecordIsWindowsAwayIsCorruptionAlike() throws {
        // An unsynced batch torn in its middle, with many records after the
        // hole: only a record far past it (several windows) vouches for it.
        var log = LogBytes(generation: 1, firstLSN: 1)
        for lsn: UInt64 in 1...300 { log.append(Array("record \(lsn) ".utf8) + [UInt8](repeating: 1, count: 30), syncedLSN: min(lsn - 1, 100)) }
        var torn = log.bytes
        for index in log.offsets[150]..<log.offsets[151] { torn[index] = 0 }
        let unproven = try expectAlike(torn, window: 256, policy: .strict, "torn, unproven")
        #expect(unproven.error == nil)
        #expect(unproven.records.count == 150)
        // The last record vouches for everything before it: the hole is corruption.
        var vouched = LogBytes(generation: 1, firstLSN: 1)
        for lsn: UInt64 in 1...300 {
            vouched.append(Array("record \(lsn) ".utf8) + [UInt8](repeating: 1, count: 30), syncedLSN: lsn == 300 ? 299 : min(lsn - 1, 100))
        }
        var hole = vouched.bytes
        for index in vouched.offsets[150]..<vouched.offsets[151] { hole[index] = 0 }
        let proven = try expectAlike(hole, window: 256, policy: .strict, "torn, vouched far away")
        #expect(proven.error == .corruption(file: "/test.log", offset: Int64(vouched.offsets[150]), lsn: 151, reason: .zeroedRegion))
    }

    @Test func crashedLogsReadAlikeThroughASmallWindow() throws {
        var random = SeededGenerator.fromEnvironment(default: 2027)
        for trial in 0..<200 {
            let fileSystem = SimulatedFileSystem()
            _ = try LogPowerLossTests().run(cut: Int(random.next() % 120), on: fileSystem, random: &random)
            fileSystem.crash(seed: random.next(), model: [CrashModel.default, .tearAll, .keepAll][trial % 3])
            let bytes = try fileSystem.openFile(at: "/log", mode: .readOnly).readAll()
            try expectAlike(bytes, window: 300, policy: trial % 2 == 0 ? .strict : .salvage, "trial \(trial)")
        }
    }
}

struct ReadOutcome: Equatable {
    var records: [LogRecord] = []
    var end: LogEnd?
    var dropped: [DroppedRange] = []
    var error: LogError?
}

/// Reads `bytes` whole and from a simulated file through a `window`-byte
/// window, expects the same outcome, and returns it.
@discardableResult
private func expectAlike(
    _ bytes: [UInt8], window: Int, policy: RecoveryPolicy, _ comment: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ReadOutcome {
    let whole = read { () throws(LogError) in try LogReader(bytes: bytes, path: "/test.log", policy: policy) }
    let fileSystem = SimulatedFileSystem()
    try fileSystem.openFile(at: "/test.log", mode: .create).write(bytes, at: 0)
    let streamed = read { try LogReader(fileSystem: fileSystem, path: "/test.log", policy: policy, windowSize: window) }
    #expect(streamed == whole, "\(comment)", sourceLocation: sourceLocation)
    return streamed
}

private func read(_ open: () throws -> LogReader) -> ReadOutcome {
    var outcome = ReadOutcome()
    do {
        var reader = try open()
        while let record = try reader.next() { outcome.records.append(record) }
        outcome.end = reader.end
        outcome.dropped = reader.dropped
    } catch let error as LogError {
        outcome.error = error
    } catch {
        Issue.record("unexpected \(error)")
    }
    return outcome
}

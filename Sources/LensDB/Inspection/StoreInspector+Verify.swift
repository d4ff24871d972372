import LensLog

/// What `logtool verify` found.
public struct VerifyReport: Codable, Sendable {
    public struct Problem: Codable, Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var offset: Int64?
        public var lsn: UInt64?
        public var message: String

        public var description: String {
            var place = file
            if let offset { place += " at offset \(offset)" }
            if let lsn { place += " (LSN \(lsn))" }
            return "\(place): \(message)"
        }
    }

    public var problems: [Problem] = []
    /// Normal things worth knowing: torn tails, temporary files.
    public var notes: [String] = []
    public var bytesRead: Int64 = 0
    public var recordsChecked = 0
    public var valuesChecked = 0

    public var isOK: Bool { problems.isEmpty }
}

extension StoreInspector {
    /// Reads every byte: every checksum, LSN continuity within and across
    /// logs, that the snapshot and the logs agree, that every record is a
    /// transaction and every value decodes. `progress` gets bytes done and total.
    /// - Throws: ``InspectionError/notAStore(path:reason:)`` only; damage is reported, not thrown.
    public func verify(progress: (Int64, Int64) -> Void = { _, _ in }) throws -> VerifyReport {
        let listing = try listing()
        var report = VerifyReport()
        report.notes += listing.temporaries.map { "\($0): an unfinished snapshot; open removes it" }
        report.notes += listing.setAside.map { "\($0): a damaged file set aside earlier; never read" }
        let total = try (listing.snapshots + listing.logs).reduce(Int64(0)) { $0 + (try Int64(read($1.path).count)) }
        for snapshot in listing.snapshots {
            verifySnapshot(snapshot.path, into: &report)
            progress(report.bytesRead, total)
        }
        var expected: UInt64?
        // A snapshot that does not verify was reported by verifySnapshot above.
        if let newest = listing.snapshots.last, let file = try? SnapshotFile(bytes: read(newest.path), path: newest.path) {
            expected = file.lastLSN + 1
            if !listing.logs.contains(where: { $0.generation == file.generation }) {
                report.problems.append(.init(file: newest.path, message: "no log of generation \(file.generation) continues this snapshot"))
            }
        }
        for log in listing.logs where log.generation >= (listing.snapshots.last?.generation ?? 0) {
            expected = verifyLog(log.path, expecting: expected, into: &report)
            progress(report.bytesRead, total)
        }
        do {
            _ = try recoveredState(policy: .strict)
        } catch {
            report.problems.append(.init(file: path, message: "open would fail: \(error)"))
        }
        return report
    }

    private func verifySnapshot(_ file: String, into report: inout VerifyReport) {
        do {
            let bytes = try read(file)
            report.bytesRead += Int64(bytes.count)
            try SnapshotFile(bytes: bytes, path: file).forEachItem { item in
                switch item {
                case let .entry(_, _, value), let .root(_, value): check(value, file: file, offset: nil, lsn: nil, into: &report)
                case .table: break
                }
            }
        } catch {
            report.problems.append(.init(file: file, message: "\(error)"))
        }
    }

    /// Checks one log; returns the LSN the next log must start at.
    private func verifyLog(_ file: String, expecting expected: UInt64?, into report: inout VerifyReport) -> UInt64? {
        // An unreadable file is reported as a problem right here.
        guard let bytes = try? read(file) else {
            report.problems.append(.init(file: file, message: "cannot be read"))
            return expected
        }
        report.bytesRead += Int64(bytes.count)
        do {
            var reader = try LogReader(bytes: bytes, path: file, policy: .salvage)
            if let expected, reader.header.firstLSN != expected {
                report.problems.append(.init(file: file, offset: 0, lsn: expected,
                    message: "starts at LSN \(reader.header.firstLSN) but LSN \(expected) is next"))
            }
            while let record = try reader.next() {
                report.recordsChecked += 1
                let dumped = Self.dumped(record, file: file)
                if let problem = dumped.problem {
                    report.problems.append(.init(file: file, offset: record.offset, lsn: record.lsn, message: problem))
                }
                for operation in dumped.operations where operation.value?.json == nil && operation.value != nil {
                    report.problems.append(.init(file: file, offset: record.offset, lsn: record.lsn, message: "a value of \(operation.text.prefix(60)) does not decode"))
                }
                report.valuesChecked += dumped.operations.count
            }
            report.problems += reader.dropped.map {
                .init(file: file, offset: $0.offset, lsn: $0.lostLSNs.lowerBound,
                      message: "\($0.reason.rawValue), followed by valid records: LSNs \($0.lostLSNs.lowerBound)..<\($0.lostLSNs.upperBound) lost")
            }
            if case let .tornTail(offset, dropped, reason)? = reader.end {
                report.notes.append("\(file): torn tail of \(dropped) bytes at offset \(offset) (\(reason.rawValue)): unsynced writes cut by a crash, not damage")
            }
            return reader.nextLSN
        } catch {
            report.problems.append(.init(file: file, message: "\(error)"))
            return expected
        }
    }

    private func check(_ value: [UInt8], file: String, offset: Int64?, lsn: UInt64?, into report: inout VerifyReport) {
        report.valuesChecked += 1
        if RenderedValue(value).json == nil {
            report.problems.append(.init(file: file, offset: offset, lsn: lsn, message: "a value does not decode"))
        }
    }
}

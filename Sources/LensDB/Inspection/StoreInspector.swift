import Foundation
import LensLog

/// Looks inside a store without the program's types: the library behind
/// `logtool`. An encrypted store is read with its key (``key``): every
/// command checks first that the key fits the store and refuses with an
/// ``InspectionError`` that names the key the store needs when it does not.
/// Reads never take the store's lock and never change a file;
/// ``repair(to:progress:)``, ``repairInPlace(progress:)`` and ``compact(progress:)`` take the lock and
/// refuse while another process holds it.
///
/// Thread-safety: a value type; each call opens the files it needs.
public struct StoreInspector: Sendable {
    public let path: String
    /// The store's key; nil for a plain store.
    public let key: EncryptionKey?
    let fileSystem: any FileSystem
    var directory: StoreDirectory { StoreDirectory(path: path, fileSystem: fileSystem) }

    /// - Parameters:
    ///   - path: the store's directory; a trailing slash is ignored.
    ///   - fileSystem: where the store lives; tests pass a simulated one.
    ///   - key: the key an encrypted store was written with; nil for a plain store.
    public init(path: String, fileSystem: any FileSystem = POSIXFileSystem(), key: EncryptionKey? = nil) {
        self.path = StoreDirectory.normalized(path)
        self.fileSystem = fileSystem
        self.key = key
    }

    /// Lists the store's files, or says why `path` is not a store: the
    /// judgement a `Store` open makes (`StoreDirectory/Identity`).
    /// - Throws: ``InspectionError/notAStore(path:reason:)``.
    func listing() throws -> StoreDirectory.Listing {
        guard fileSystem.fileExists(at: path) else { throw InspectionError.notAStore(path: path, reason: "it does not exist") }
        let listing: StoreDirectory.Listing
        do {
            listing = try directory.list()
        } catch {
            throw InspectionError.notAStore(path: path, reason: "it is not a readable directory (\(error))")
        }
        switch listing.identity {
        case .store: return listing
        case .empty: throw InspectionError.notAStore(path: path, reason: "it is empty")
        case .foreign(let entries):
            throw InspectionError.notAStore(path: path, reason: "it holds \(entries.count) other entries and no LensDB marker, log or snapshot")
        }
    }

    /// Recovery as open would run it on this store, judged by the same
    /// clean-close marker, without setting anything aside.
    func chain(policy: RecoveryPolicy) throws -> LogChain {
        LogChain(directory: directory, policy: policy, setAsideDamaged: false, cleanClose: try directory.cleanClose(), cipher: key)
    }

    func read(_ file: String) throws -> [UInt8] {
        try read(file, through: nil)
    }

    /// The whole of `file`, through `handle` when one is open already.
    func read(_ file: String, through handle: (any StoredFile)?) throws -> [UInt8] {
        if let handle { return try handle.readAll() }
        let handle = try fileSystem.openFile(at: file, mode: .readOnly)
        defer { handle.close() }
        return try handle.readAll()
    }

    /// The store's state as open would recover it, without the lock and without changing a file.
    func recoveredState(policy: RecoveryPolicy, progress: ProgressHandler? = nil) throws -> (StoreState, RecoveryReport) {
        var state = StoreState()
        let listing = try listing()
        var reading = ReadingProgress(listing, fileSystem: fileSystem, handler: progress)
        var notApplied: [DroppedLogRange] = []
        var report = try chain(policy: policy).recover(listing: listing, loadSnapshot: { snapshot in
            state = try Store.loadState(from: snapshot)
            notApplied = []
            reading.read(snapshot: snapshot.path)
        }, apply: { record, file in
            if let dropped = try Store.replay(record, from: file, into: &state, policy: policy) { notApplied.append(dropped) }
            reading.read(record, in: file)
        })
        reading.finish()
        report.addDropped(notApplied)
        return (state, report)
    }
}

/// `text` without the `file: ` it starts with (errors name their file; the
/// reports name it already).
func stripping(_ file: String, from text: String) -> String {
    var text = text
    while text.hasPrefix(file + ": ") { text.removeFirst(file.count + 2) }
    return text
}

/// Why `logtool` could not do what it was asked.
public enum InspectionError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAStore(path: String, reason: String)
    /// Another process writes the store; `repair` and `compact` need it closed.
    case locked(path: String, holder: Int32?)
    /// `repair --output` will not overwrite anything.
    case outputExists(path: String)
    /// The directory repair builds its output in (`<output>.repair-tmp`, or
    /// `<store>.repair` in place) is there, and holds `entries` that are
    /// not a store's files, or a snapshot (a whole store): it is not only
    /// what an interrupted repair left, and nothing in it was removed.
    case workspaceInUse(path: String, entries: [String])
    /// `repair` found no usable snapshot and logs that do not reach back to
    /// LSN 1, and no snapshot, in place or set aside, whose header verifies
    /// (`snapshots` says why of each): nothing says where the history
    /// starts. Nothing was written.
    case nothingToSalvage(path: String, snapshots: [String])
    /// `repair --in-place` moved the original store to `backup`, then failed
    /// (`cause`): moving the repaired store from `repaired` into its place,
    /// or, with `repaired` nil, after both moves, syncing their directory,
    /// so a power loss may undo either move. Both stores are whole.
    case repairCutShort(path: String, backup: String, repaired: String?, cause: String)
    /// `dump --table` names a table the store has never held.
    case noSuchTable(path: String, table: String, tables: [String])
    /// `dump --snapshot` of a store that has no snapshot yet (never
    /// compacted), or none that verifies (`damaged` lists them).
    case noSnapshot(path: String, damaged: [String])
    /// The store is encrypted (under the key named `keyID`) and no key was given.
    case keyRequired(path: String, keyID: KeyID)
    /// The store's files are encrypted under `found` (newest first), none under the key given.
    case wrongKey(path: String, found: [KeyID], given: KeyID)
    /// The store is not encrypted, and a key was given.
    case notEncrypted(path: String, given: KeyID)
    /// A `--key-file` that does not hold a key: `reason` says what it holds.
    case badKeyFile(path: String, reason: String)

    public var description: String {
        switch self {
        case let .notAStore(path, reason): "\(path) is not a LensDB store: \(reason)"
        case let .locked(path, holder) where holder == getpid():
            "\(path) is open in this process: another Store of it holds the lock; close that Store, then retry"
        case let .locked(path, holder):
            "\(path) is in use by \(holder.map { "process \($0)" } ?? "another process"); close it there, then retry"
        case let .outputExists(path): "\(path) already exists; choose a new output path"
        case let .workspaceInUse(path, entries):
            "\(path) is where repair builds the repaired store, and it holds files LensDB did not write or a store's snapshot (\(entries.map { $0.split(separator: "/").last.map(String.init) ?? $0 }.joined(separator: ", "))); nothing was removed: move that directory away (it may be a store repaired before), then repair again"
        case let .nothingToSalvage(path, snapshots):
            "\(path): no snapshot can be salvaged (\(snapshots.isEmpty ? "there is none" : snapshots.joined(separator: "; "))) and the logs do not reach back to LSN 1, so nothing says where the history starts; nothing was written. Restore the store from a backup"
        case let .repairCutShort(path, backup, repaired?, cause):
            "\(path): the original store was moved to \(backup), but moving the repaired store from \(repaired) into its place failed (\(cause)), so \(path) is missing. Both are whole: rename \(repaired) to \(path) to finish the repair, or \(backup) to \(path) to undo it"
        case let .repairCutShort(path, backup, nil, cause):
            "\(path) is repaired and the original is at \(backup), but syncing their directory failed (\(cause)), so a power loss may undo either move; check it with `logtool verify \(pathWord(path))` after a restart before removing \(backup)"
        case let .noSuchTable(path, table, tables):
            "\(path) has no table \(table); its tables: \(tables.isEmpty ? "none" : tables.joined(separator: ", "))"
        case let .noSnapshot(path, damaged) where damaged.isEmpty:
            "\(path) has no snapshot yet (it was never compacted); dump its transactions without --snapshot, or run `logtool compact \(pathWord(path))` first"
        case let .noSnapshot(path, damaged):
            "\(path) has no snapshot that verifies (\(damaged.joined(separator: ", ")) fail their checks); run `logtool verify \(pathWord(path))` to see why"
        case let .keyRequired(path, keyID):
            "\(path) is encrypted (key id \(keyID)) and no key was given; pass --key-file with the file that holds that key's 32 bytes"
        case let .wrongKey(path, found, given):
            "\(path) is encrypted with key id \(found.map(\.description).joined(separator: " or ")), not with the key given (key id \(given)); pass --key-file with the store's key"
        case let .badKeyFile(path, reason):
            "\(path) is not a key file: \(reason); a key file holds the key's 32 bytes, raw or as 64 hex digits"
        case let .notEncrypted(path, given):
            "\(path) is not encrypted, but a key was given (key id \(given)); run without --key-file (compact --new-key-file encrypts it)"
        }
    }
}

/// A stored key or value shown without the program's types, as the
/// encoding its table (or root document) recorded says: raw and unknown
/// bytes as hex with their printable ASCII, ordered keys decoded, values in
/// the value format as JSON. Nothing is guessed: bytes are judged only
/// against the encoding the store promised.
///
/// JSON shape: `{"encoding": "raw", "hex": "6b31", "ascii": "k1"}`,
/// `{"encoding": "int64", "json": 42}`, `{"encoding": "valueFormat", "json": {…}}`,
/// or, for bytes that break their promise, `{"encoding": …, "hex": …, "ascii": …, "problem": "…"}`.
/// `encoding` is `unknown` for tables of stores written before encodings
/// were recorded.
public struct RenderedValue: Codable, Sendable, Equatable {
    /// ``KeyEncoding/name`` or ``ValueEncoding/name``, or `unknown`.
    public var encoding: String
    public var json: Document?
    public var hex: String?
    /// The bytes as ASCII, `.` for each byte that is not printable; set with ``hex``.
    public var ascii: String?
    /// How the bytes break the encoding they promised; nil when they keep it.
    public var problem: String?

    /// A key of a table whose keys are encoded as `encoding` (nil: unknown).
    public init(key bytes: [UInt8], encoding: KeyEncoding?) {
        self.encoding = encoding?.name ?? "unknown"
        guard let encoding, encoding != .raw else {
            showBytes(bytes)
            return
        }
        if let decoded = OrderedKey.decode(bytes, as: encoding), OrderedKey.problem(with: bytes, as: encoding) == nil {
            json = decoded
        } else {
            showBytes(bytes)
            problem = OrderedKey.problem(with: bytes, as: encoding) ?? "does not decode as \(encoding)"
        }
    }

    /// A value encoded as `encoding` (nil: unknown).
    public init(value bytes: [UInt8], encoding: ValueEncoding?) {
        self.encoding = encoding?.name ?? "unknown"
        guard encoding == .valueFormat else {
            showBytes(bytes)
            return
        }
        do {
            json = try Document(decodingBinary: bytes)
        } catch {
            showBytes(bytes)
            problem = "\(error)"
        }
    }

    /// Hex and printable ASCII, built byte by byte without formatting: a
    /// `logtool verify` or `dump` of a large log shows every value this way.
    private mutating func showBytes(_ bytes: [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        hex = String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
        ascii = String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
    }

    /// One line of text: `42`, `"alice"`, a UUID as its usual string, JSON,
    /// or `0x6b31 "k1"` for bytes shown as bytes.
    public var text: String {
        if case let .uuid(uuid)? = json { return uuid.uuidString }
        if let json { return json.jsonString() }
        return "0x\(hex ?? "") \"\(ascii ?? "")\""
    }
}

/// How each table and root document is encoded, as far as the records
/// read so far say: the snapshot's encoding items, then every declaration
/// in the logs. Declarations are never forgotten here; a table that became
/// empty and is written again gets a new declaration in that same
/// transaction, so every put and remove meets the encoding it was written with.
struct EncodingCatalog {
    var tables: [String: TableEncoding] = [:]
    var roots: [String: ValueEncoding] = [:]
    private var snapshotTables: [UInt64: String] = [:]

    mutating func note(_ operations: [Operation]) {
        for operation in operations {
            switch operation {
            case let .declareTable(table, encoding): tables[table] = encoding
            case let .declareRoot(name, encoding): roots[name] = encoding
            default: break
            }
        }
    }

    /// Notes one snapshot item (items of one snapshot, in order).
    mutating func note(_ item: SnapshotItem) {
        switch item {
        case let .table(id, name): snapshotTables[id] = name
        case let .tableEncoding(id, key, value):
            if let name = snapshotTables[id], let key = KeyEncoding(rawValue: key), let value = ValueEncoding(rawValue: value) {
                tables[name] = TableEncoding(key: key, value: value)
            }
        case let .rootEncoding(name, value): roots[name] = ValueEncoding(rawValue: value)
        case .entry, .root, .indexOrder: break
        }
    }

    func tableName(_ id: UInt64) -> String? { snapshotTables[id] }

    /// Every table a snapshot item or a declaration named so far.
    var tableNames: Set<String> { Set(snapshotTables.values).union(tables.keys) }
}

/// JSON as `logtool --json` prints it: sorted keys, ISO 8601 dates, and
/// NaN / ±infinity as strings so that every value prints. A date outside
/// years 1 to 9999 (or not finite) is its seconds since 2001, as
/// ``Document/jsonString(pretty:)`` writes it: ISO 8601 text would name
/// another date.
public func inspectionJSON<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var single = encoder.singleValueContainer()
        if Document.iso8601Years.contains(date.timeIntervalSince1970) {
            try single.encode(date.formatted(.iso8601))
        } else {
            try single.encode(date.timeIntervalSinceReferenceDate)
        }
    }
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

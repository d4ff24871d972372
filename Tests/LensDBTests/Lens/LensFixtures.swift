import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// The documents of the lens tests.
struct Protection: Codable, Sendable, Equatable {
    var enabled: Bool
    var passcode: String?
    var retries = 3
}

struct Credentials: Codable, Sendable, Equatable {
    var user: String
    var token: String
}

struct Settings: Codable, Sendable, Equatable {
    var code: String?
}

struct AppState: Codable, Sendable, Equatable {
    var credentials: Credentials?
    var protection: Protection?
    var flags: [String: Bool]?
    var settings: Settings?
    var theme = "light"
    var counters: [String: Int] = [:]
}

/// A store on a simulated file system with invariant checks (which verify
/// every patch a lens logs against replay), for lens tests.
func lensStore(_ fileSystem: SimulatedFileSystem = SimulatedFileSystem(), path: String = "/l.lensdb") throws -> Store {
    var options = StoreOptions()
    options.fileSystem = fileSystem
    options.checksInvariants = true
    options.compactionLogRatio = nil
    options.log.backgroundSyncInterval = nil
    options.log.preallocationChunk = 4096
    return try Store(at: path, options: options)
}

/// The operations of the newest log record of `store`, as replay reads them.
func lastLoggedOperations(_ store: Store, _ fileSystem: SimulatedFileSystem) throws -> [LensDB.Operation] {
    try store.flush()
    let log = try StoreDirectory(path: store.path!, fileSystem: fileSystem).list().logs.last!.path
    var reader = try LogReader(fileSystem: fileSystem, path: log, policy: .strict)
    var last: LogRecord?
    while let record = try reader.next() { last = record }
    let record = try #require(last)
    return try #require(TransactionFormat.decode(record.payload))
}

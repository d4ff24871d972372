#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory entry of the simulated file system.
enum SimulatedEntry: Equatable, Sendable {
    case file(inode: Int)
    case directory
}

/// One directory: what a listing shows now, and what survives a crash.
struct SimulatedDirectory: Sendable {
    var current: [String: SimulatedEntry] = [:]
    var durable: [String: SimulatedEntry] = [:]
    /// Kept for ``SimulatedFileSystem/directoryPermissions(at:)``; nothing is enforced.
    var permissions = FilePermissions.ownerOnly
}

/// A change to a file not yet made durable by a sync, in call order.
struct PendingChange: Sendable {
    enum Kind: Sendable {
        case write(offset: Int, bytes: [UInt8])
        /// `ftruncate`: cut or zero-extend to exactly this length.
        case resize(length: Int)
        /// `fallocate`: zero-extend to at least this length, never cut.
        case extend(length: Int)
    }
    var kind: Kind
    /// Set by a failed sync: like Linux after a failed fsync, the page cache
    /// still shows the data but it will never reach the disk.
    var doomed = false
}

/// A file's bytes: what reads see now, and what a crash starts from.
struct SimulatedInode: Sendable {
    var current: [UInt8] = []
    var durable: [UInt8] = []
    var pending: [PendingChange] = []
}

/// Everything a ``SimulatedFileSystem`` knows, guarded by its mutex.
struct SimulatedState: Sendable {
    var inodes: [Int: SimulatedInode] = [:]
    var directories: [String: SimulatedDirectory] = ["": SimulatedDirectory()]
    var nextID = 1
    var openHandles: Set<Int> = []
    /// Lock path → (lock id, holder pid).
    var locks: [String: (id: Int, holder: Int32)] = [:]
    var faults: [ArmedFault] = []
    var callCounts: [StorageError.Operation: Int] = [:]
    /// Admitted file and directory syncs by what they asked for.
    var syncCounts: [SyncNeed: Int] = [:]
    var mutatingCalls = 0
    /// Mutating calls still allowed before the power cut, when one is armed.
    var powerCutBudget: Int?
    var poweredOff = false

    mutating func makeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }
}

/// Paths: components split on "/", with "" and "." dropped, so "a/b",
/// "./a/b" and "a//b" name the same file. The root is "".
enum SimulatedPath {
    static func key(_ path: String) -> String {
        path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }

    /// The parent directory's key and the last component, or nil for the root.
    static func split(_ path: String) -> (parent: String, name: String)? {
        var parts = path.split(separator: "/").filter { $0 != "." }
        guard let name = parts.popLast() else { return nil }
        return (parts.joined(separator: "/"), String(name))
    }

    static func join(_ parent: String, _ name: String) -> String {
        parent.isEmpty ? name : parent + "/" + name
    }
}

extension SimulatedState {
    /// The entry `path` names now, `.directory` for the root.
    func entry(at path: String) -> SimulatedEntry? {
        guard let (parent, name) = SimulatedPath.split(path) else { return .directory }
        return directories[parent]?.current[name]
    }

    /// The inode `path` names now.
    func inode(at path: String) -> Int? {
        if case .file(let inode)? = entry(at: path) { return inode }
        return nil
    }

    /// The parent directory's key and the name, or ENOENT if the parent is missing.
    func existingParent(of path: String, _ operation: StorageError.Operation) throws(StorageError) -> (parent: String, name: String) {
        guard let (parent, name) = SimulatedPath.split(path), directories[parent] != nil else {
            throw StorageError(errno: ENOENT, operation, path: path)
        }
        return (parent, name)
    }

    /// The inode of the file at `path`, or ENOENT / EISDIR.
    func existingFile(at path: String, _ operation: StorageError.Operation) throws(StorageError) -> Int {
        switch entry(at: path) {
        case .file(let inode)?: return inode
        case .directory?: throw StorageError(errno: EISDIR, operation, path: path)
        case nil: throw StorageError(errno: ENOENT, operation, path: path)
        }
    }

    /// Sets the current entry `name` in `parent` (removes it for nil).
    mutating func link(_ entry: SimulatedEntry?, _ name: String, in parent: String) {
        directories[parent, default: SimulatedDirectory()].current[name] = entry
    }
}

extension Array where Element == UInt8 {
    /// Writes `bytes` at `offset`, zero-filling any gap past the end.
    mutating func place<Bytes: Collection<UInt8>>(_ bytes: Bytes, at offset: Int) {
        let end = offset + bytes.count
        if end > count { append(contentsOf: repeatElement(0, count: end - count)) }
        replaceSubrange(offset..<end, with: bytes)
    }

    /// Cuts or zero-extends to exactly `length` bytes.
    mutating func resize(to length: Int) {
        if length < count { removeLast(count - length) } else { place([], at: length) }
    }
}

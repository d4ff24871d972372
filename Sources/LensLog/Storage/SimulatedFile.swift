#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A handle from ``SimulatedFileSystem/openFile(at:mode:)``. Holds only
/// immutable values; all state lives in the file system's mutex.
final class SimulatedFile: StoredFile {
    let path: String
    private let fileSystem: SimulatedFileSystem
    private let handle: Int
    private let inode: Int
    private let writable: Bool

    init(fileSystem: SimulatedFileSystem, path: String, handle: Int, inode: Int, writable: Bool) {
        self.fileSystem = fileSystem
        self.path = path
        self.handle = handle
        self.inode = inode
        self.writable = writable
    }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try call(.read, mutating: false) { state, effect throws(StorageError) in
            if let effect { throw effect.plainError(.read, self.path) }
            guard offset >= 0 else { throw StorageError(errno: EINVAL, .read, path: self.path) }
            let bytes = state.inodes[self.inode]!.current
            let start = min(Int(offset), bytes.count)
            return Array(bytes[start..<min(start + max(count, 0), bytes.count)])
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let data = [UInt8](bytes)
        try call(.write, mutating: true) { state, effect throws(StorageError) in
            try self.requireWritable(.write)
            guard offset >= 0 else { throw StorageError(errno: EINVAL, .write, path: self.path) }
            var kept = data
            switch effect {
            case nil: break
            case .shortWrite(let count)?: kept = Array(data.prefix(max(count, 0)))
            case let other?: throw other.plainError(.write, self.path)
            }
            if !kept.isEmpty {
                state.inodes[self.inode]!.current.place(kept, at: Int(offset))
                state.inodes[self.inode]!.pending.append(PendingChange(kind: .write(offset: Int(offset), bytes: kept)))
            }
            if effect != nil { throw StorageError(errno: ENOSPC, .write, path: self.path) }
        }
    }

    func size() throws -> Int64 {
        try call(.size, mutating: false) { state, effect throws(StorageError) in
            if let effect { throw effect.plainError(.size, self.path) }
            return Int64(state.inodes[self.inode]!.current.count)
        }
    }

    func sync(_ need: SyncNeed) throws {
        try call(.sync, mutating: true) { state, effect throws(StorageError) in
            state.syncCounts[need, default: 0] += 1
            switch effect {
            case nil:
                state.inodes[self.inode]!.commitPending()
            case .failedSync?:
                state.inodes[self.inode]!.doomPending()
                throw StorageError(errno: EIO, .sync, path: self.path)
            case let other?:
                throw other.plainError(.sync, self.path)
            }
        }
    }

    /// Changes nothing: writeback started is not durable, and a crash keeps,
    /// drops or tears those writes like any others not yet synced. Admitted
    /// as a call (not a mutating one), so that faults can fail it.
    func startWriteback(at offset: Int64, length: Int64) throws {
        try call(.writeback, mutating: false) { _, effect throws(StorageError) in
            if let effect { throw effect.plainError(.writeback, self.path) }
            guard offset >= 0, length >= 0 else { throw StorageError(errno: EINVAL, .writeback, path: self.path) }
        }
    }

    func truncate(to length: Int64) throws {
        try call(.truncate, mutating: true) { state, effect throws(StorageError) in
            try self.requireWritable(.truncate)
            if let effect { throw effect.plainError(.truncate, self.path) }
            guard length >= 0 else { throw StorageError(errno: EINVAL, .truncate, path: self.path) }
            state.inodes[self.inode]!.current.resize(to: Int(length))
            state.inodes[self.inode]!.pending.append(PendingChange(kind: .resize(length: Int(length))))
        }
    }

    func preallocate(at offset: Int64, length: Int64) throws {
        try call(.preallocate, mutating: true) { state, effect throws(StorageError) in
            try self.requireWritable(.preallocate)
            if let effect { throw effect.plainError(.preallocate, self.path) }
            guard offset >= 0, length >= 0 else { throw StorageError(errno: EINVAL, .preallocate, path: self.path) }
            let end = Int(offset + length)
            guard end > state.inodes[self.inode]!.current.count else { return }
            state.inodes[self.inode]!.current.resize(to: end)
            state.inodes[self.inode]!.pending.append(PendingChange(kind: .extend(length: end)))
        }
    }

    func close() {
        fileSystem.state.withLock { _ = $0.openHandles.remove(handle) }
    }

    private func requireWritable(_ operation: StorageError.Operation) throws(StorageError) {
        guard writable else { throw StorageError(.permissionDenied, operation, path: path, errno: EBADF) }
    }

    /// Runs `body` under the file system's lock once the call is admitted.
    private func call<Result: Sendable>(
        _ operation: StorageError.Operation,
        mutating: Bool,
        _ body: (inout SimulatedState, Fault.Effect?) throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        fileSystem.notify(operation, path)
        return try fileSystem.state.withLock { state throws(StorageError) in
            let effect = try state.admit(operation, path, mutating: mutating, handle: handle)
            return try body(&state, effect)
        }
    }
}

/// A lock from ``SimulatedFileSystem/lockFile(at:)``.
final class SimulatedLock: FileLock {
    private let fileSystem: SimulatedFileSystem
    private let key: String
    private let id: Int

    init(fileSystem: SimulatedFileSystem, key: String, id: Int) {
        self.fileSystem = fileSystem
        self.key = key
        self.id = id
    }

    /// Releases the lock unless a crash (or an earlier unlock) already did.
    func unlock() {
        fileSystem.state.withLock { state in
            if state.locks[key]?.id == id { state.locks[key] = nil }
        }
    }
}

extension SimulatedInode {
    /// A successful sync: every change not doomed by a failed sync reaches the disk.
    mutating func commitPending() {
        for change in pending where !change.doomed { durable.apply(change.kind) }
        pending = []
    }

    /// A failed sync: Linux marks the dirty pages clean, so these never reach the disk.
    mutating func doomPending() {
        for index in pending.indices { pending[index].doomed = true }
    }
}

extension Array where Element == UInt8 {
    mutating func apply(_ change: PendingChange.Kind) {
        switch change {
        case .write(let offset, let bytes): place(bytes, at: offset)
        case .resize(let length): resize(to: length)
        case .extend(let length): if length > count { resize(to: length) }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The name-level calls of ``SimulatedFileSystem``: each changes only the
/// current directory maps; ``syncDirectory(_:)`` makes one of them durable.
extension SimulatedState {
    /// Opens (maybe creates) `path`; returns the new handle and its inode.
    /// Creating modes count as mutating calls, whether or not the file exists.
    mutating func open(_ path: String, _ mode: FileOpenMode) throws(StorageError) -> (handle: Int, inode: Int) {
        let creates = mode == .create || mode == .createNew
        try admitOrThrow(.open, path, mutating: creates)
        let (parent, name) = try existingParent(of: path, .open)
        let inode: Int
        switch directories[parent]!.current[name] {
        case .directory?:
            throw StorageError(errno: EISDIR, .open, path: path)
        case .file(let existing)?:
            guard mode != .createNew else { throw StorageError(errno: EEXIST, .open, path: path) }
            inode = existing
        case nil:
            guard creates else { throw StorageError(errno: ENOENT, .open, path: path) }
            inode = makeID()
            inodes[inode] = SimulatedInode()
            link(.file(inode: inode), name, in: parent)
        }
        let handle = makeID()
        openHandles.insert(handle)
        return (handle, inode)
    }

    /// Unlinks `path`; open handles keep the inode, as on POSIX.
    mutating func remove(_ path: String) throws(StorageError) {
        try admitOrThrow(.remove, path, mutating: true)
        let (parent, name) = try existingParent(of: path, .remove)
        _ = try existingFile(at: path, .remove)
        link(nil, name, in: parent)
    }

    /// Points `destination` at `source`'s inode and unlinks `source`, in one step.
    mutating func rename(_ source: String, to destination: String) throws(StorageError) {
        try admitOrThrow(.rename, source, mutating: true)
        let inode = try existingFile(at: source, .rename)
        let (targetParent, targetName) = try existingParent(of: destination, .rename)
        if directories[targetParent]!.current[targetName] == .directory {
            throw StorageError(errno: EISDIR, .rename, path: destination)
        }
        let (sourceParent, sourceName) = SimulatedPath.split(source)!
        link(nil, sourceName, in: sourceParent)
        link(.file(inode: inode), targetName, in: targetParent)
    }

    func listing(_ directory: String) -> [String]? {
        directories[SimulatedPath.key(directory)].map { $0.current.keys.sorted() }
    }

    mutating func list(_ directory: String) throws(StorageError) -> [String] {
        try admitOrThrow(.list, directory, mutating: false)
        guard let names = listing(directory) else {
            throw StorageError(errno: entry(at: directory) == nil ? ENOENT : ENOTDIR, .list, path: directory)
        }
        return names
    }

    /// `mkdir -p`: each missing component gets a current (not durable)
    /// entry; the last one, when created, records `permissions`.
    mutating func createDirectory(_ directory: String, permissions: FilePermissions) throws(StorageError) {
        try admitOrThrow(.createDirectory, directory, mutating: true)
        var parent = ""
        for component in directory.split(separator: "/") where component != "." {
            let name = String(component)
            let child = SimulatedPath.join(parent, name)
            switch directories[parent]!.current[name] {
            case .directory?: break
            case .file?: throw StorageError(errno: EEXIST, .createDirectory, path: child)
            case nil:
                link(.directory, name, in: parent)
                directories[child] = SimulatedDirectory()
                if child == SimulatedPath.key(directory) { directories[child]!.permissions = permissions }
            }
            parent = child
        }
    }

    mutating func syncDirectory(_ directory: String) throws(StorageError) {
        try admitOrThrow(.syncDirectory, directory, mutating: true)
        syncCounts[.directoryEntries, default: 0] += 1
        let key = SimulatedPath.key(directory)
        guard directories[key] != nil else { throw StorageError(errno: ENOENT, .syncDirectory, path: directory) }
        directories[key]!.durable = directories[key]!.current
    }

    /// Takes the lock on `path`, creating the file if needed; returns the lock's id.
    mutating func lock(_ path: String, holder: Int32) throws(StorageError) -> Int {
        try admitOrThrow(.lock, path, mutating: false)
        let (parent, name) = try existingParent(of: path, .lock)
        if directories[parent]!.current[name] == nil {
            let inode = makeID()
            inodes[inode] = SimulatedInode()
            link(.file(inode: inode), name, in: parent)
        }
        let key = SimulatedPath.key(path)
        if let held = locks[key] {
            throw StorageError(.locked, .lock, path: path, errno: EWOULDBLOCK, lockHolder: held.holder)
        }
        let id = makeID()
        locks[key] = (id, holder)
        return id
    }

    /// See ``SimulatedFileSystem/setContents(_:of:)``.
    mutating func plant(_ bytes: [UInt8], at path: String) {
        guard let (parent, name) = SimulatedPath.split(path) else { preconditionFailure("cannot plant bytes at the root") }
        var directory = ""
        for component in parent.split(separator: "/") {
            let child = SimulatedPath.join(directory, String(component))
            if directories[child] == nil { directories[child] = SimulatedDirectory() }
            directories[directory]!.current[String(component)] = .directory
            directories[directory]!.durable[String(component)] = .directory
            directory = child
        }
        let inode = inode(at: path) ?? makeID()
        inodes[inode] = SimulatedInode(current: bytes, durable: bytes, pending: [])
        directories[parent]!.current[name] = .file(inode: inode)
        directories[parent]!.durable[name] = .file(inode: inode)
    }
}

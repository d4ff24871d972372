/// Who may read and write a store: the mode of its directory, from which
/// every file created in it takes its own.
///
/// A store's files take their directory's mode without the execute bits
/// (a directory of 0700 holds files of 0600, 0750 files of 0640), as
/// PostgreSQL derives its files' modes from its data directory. So the mode
/// chosen when a store is created (``StoreOptions``' `permissions`) stays the
/// store's mode: compaction's new snapshots and logs, the lock and the
/// clean-close marker, and a copy that `logtool repair --output` writes all
/// take it from the directory, and `chmod` of the directory changes it for
/// every file created after.
///
/// The default, ``ownerOnly``, is what PostgreSQL and etcd use for their
/// data: a store often holds credentials.
public struct FilePermissions: Sendable, Hashable, CustomStringConvertible {
    /// The directory's permission bits, e.g. `0o700`, with the setgid bit
    /// (`0o2000`) when its files are to take its group.
    public let directoryMode: UInt16
    /// The directory's group, when a copy is to keep it (what
    /// `directoryPermissions(at:)` reads); nil: the creator's. Given on a
    /// best-effort basis: an owner outside the group cannot give it.
    public var group: UInt32?

    /// Permissions with the directory mode `directoryMode`.
    ///
    /// - Precondition: the owner may read, write and enter the directory
    ///   (`directoryMode & 0o700 == 0o700`) and no bits beyond the nine
    ///   permission bits and setgid are set: a store its owner cannot write
    ///   is a programmer error, not a choice.
    public init(directoryMode: UInt16) {
        precondition(directoryMode & 0o700 == 0o700 && directoryMode & ~0o2777 == 0,
                     "a store's directory mode must give its owner rwx and hold only permission bits and setgid, not \(String(directoryMode, radix: 8))")
        self.directoryMode = directoryMode
    }

    /// The permissions of an existing directory of mode `mode`, with the
    /// owner's read, write and search bits added when it lacks them (so a
    /// copy of a store made read-only can be written) and any bits beyond
    /// the nine permission bits and setgid dropped.
    public init(keeping mode: UInt16) {
        self.init(directoryMode: mode & 0o2777 | 0o700)
    }

    /// Only the owner reads or writes: directory 0700, files 0600. The default.
    public static let ownerOnly = FilePermissions(directoryMode: 0o700)
    /// The owner writes, the group reads: directory 0750, files 0640.
    public static let groupReadable = FilePermissions(directoryMode: 0o750)
    /// The owner and the group read and write: directory 0770 with setgid,
    /// so files another member creates take the directory's group; files 0660.
    public static let groupWritable = FilePermissions(directoryMode: 0o2770)
    /// The owner writes, everyone reads: directory 0755, files 0644.
    public static let everyoneReadable = FilePermissions(directoryMode: 0o755)

    /// The mode of a file in such a directory: its bits without execute,
    /// and never writable by others (a directory open to everyone, 0777,
    /// still gets files of 0664).
    public var fileMode: UInt16 { directoryMode & 0o664 }

    /// `0700/0600`: the directory's mode and its files'.
    public var description: String { "\(Self.octal(directoryMode & 0o777))/\(Self.octal(fileMode))" }

    private static func octal(_ mode: UInt16) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

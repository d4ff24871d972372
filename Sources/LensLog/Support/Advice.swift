#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The commands errors advise are written whole, so that a user can paste
// them: the store's path absolute and, where a shell would split or
// expand it, quoted.

/// The `logtool repair` command, in backticks, that writes what verifies
/// of the store at `directory` into a new store beside it (`repair` needs
/// `--output` or `--in-place`).
public func repairCommand(for directory: String) -> String {
    let store = absolutePath(directory)
    return "`logtool repair \(pathWord(store)) --output \(pathWord(store + ".repaired"))` (with --key-file when the store is encrypted)"
}

/// ``repairCommand(for:)`` for the store that holds `file`.
public func repairCommand(forFileIn file: String) -> String {
    repairCommand(for: parentDirectory(of: file))
}

/// `path` as one word of a shell command line: absolute (``absolutePath(_:)``),
/// and in single quotes when a shell would split or expand it.
public func pathWord(_ path: String) -> String {
    let path = absolutePath(path)
    let plain = path.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: ","),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "%"): true
        default: false
        }
    }
    return plain ? path : "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}

/// `path` absolute and canonical, as the file system resolves it
/// (`realpath`, symbolic links included), so that a name built beside it
/// lands beside it; a relative path would be taken from this process's
/// working directory, which the user who pastes the advice may not share.
/// A path that does not resolve is made absolute by its text alone, and
/// one this process cannot place (no working directory) stays as it is.
public func absolutePath(_ path: String) -> String {
    if let resolved = realpath(path, nil) {
        defer { free(resolved) }
        return String(cString: resolved)
    }
    var full = path
    if !path.hasPrefix("/") {
        guard let directory = getcwd(nil, 0) else { return path }
        full = String(cString: directory) + "/" + path
        free(directory)
    }
    var parts: [Substring] = []
    for part in full.split(separator: "/") {
        switch part {
        case ".": continue
        case "..": _ = parts.popLast()
        default: parts.append(part)
        }
    }
    return "/" + parts.joined(separator: "/")
}

import LensLog

// Byte-level damage for tests: on arrays, and on files of a SimulatedFileSystem
// (where the damage is planted durably, as if the disk had rotted).

/// XORs the byte at `index` with `mask` (every bit by default).
public func flip(byteAt index: Int, in bytes: inout [UInt8], mask: UInt8 = 0xFF) {
    precondition(bytes.indices.contains(index), "flip at \(index) outside \(bytes.count) bytes")
    bytes[index] ^= mask
}

/// Sets the bytes in `range` to zero, growing the array if the range reaches past its end.
public func zero(range: Range<Int>, in bytes: inout [UInt8]) {
    overwrite(at: range.lowerBound, with: [UInt8](repeating: 0, count: range.count), in: &bytes)
}

/// Replaces bytes from `offset` with `replacement`, growing the array with zeros if needed.
public func overwrite(at offset: Int, with replacement: [UInt8], in bytes: inout [UInt8]) {
    let end = offset + replacement.count
    if end > bytes.count { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
    bytes.replaceSubrange(offset..<end, with: replacement)
}

/// Cuts `bytes` to its first `length` bytes (no-op if already shorter).
public func truncate(_ bytes: inout [UInt8], to length: Int) {
    if length < bytes.count { bytes.removeLast(bytes.count - length) }
}

/// Removes the last `count` bytes (all of them if fewer).
public func shrink(_ bytes: inout [UInt8], by count: Int) {
    truncate(&bytes, to: max(bytes.count - count, 0))
}

/// Fills `range` with bytes from `random`, growing the array if needed.
public func garble(range: Range<Int>, in bytes: inout [UInt8], using random: inout some RandomNumberGenerator) {
    overwrite(at: range.lowerBound, with: range.map { _ in UInt8.random(in: 0...255, using: &random) }, in: &bytes)
}

extension SimulatedFileSystem {
    /// Applies `damage` to the file at `path` and makes the result its current
    /// and durable content. The file must exist.
    public func corrupt(_ path: String, _ damage: (inout [UInt8]) -> Void) {
        guard var bytes = contents(of: path) else { preconditionFailure("no file at \(path) to corrupt") }
        damage(&bytes)
        setContents(bytes, of: path)
    }

    /// XORs one byte of the file at `path` with `mask`.
    public func flip(byteAt index: Int, inFile path: String, mask: UInt8 = 0xFF) {
        corrupt(path) { LensTestSupport.flip(byteAt: index, in: &$0, mask: mask) }
    }

    /// Zeroes `range` of the file at `path`.
    public func zero(range: Range<Int>, inFile path: String) {
        corrupt(path) { LensTestSupport.zero(range: range, in: &$0) }
    }

    /// Cuts the file at `path` to `length` bytes.
    public func truncate(file path: String, to length: Int) {
        corrupt(path) { LensTestSupport.truncate(&$0, to: length) }
    }

    /// Overwrites the file at `path` from `offset` with `replacement`.
    public func overwrite(at offset: Int, with replacement: [UInt8], inFile path: String) {
        corrupt(path) { LensTestSupport.overwrite(at: offset, with: replacement, in: &$0) }
    }
}

/// Recomputes the checksum of the log record whose frame starts at `offset`
/// (CRC32C of the generation, the frame's first 24 bytes and the stored
/// payload; see the log format article), so that damage planted in its
/// payload passes every checksum and only what reads the payload finds it.
public func rechecksumLogRecord(at offset: Int, in bytes: inout [UInt8], generation: UInt64) {
    let length = Int(bytes[offset..<(offset + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    var salt: [UInt8] = []
    for shift in stride(from: 0, to: 64, by: 8) { salt.append(UInt8(truncatingIfNeeded: generation >> UInt64(shift))) }
    var crc = CRC32C.checksum(salt)
    crc = CRC32C.checksum(Array(bytes[offset..<(offset + 24)]), continuing: crc)
    crc = CRC32C.checksum(Array(bytes[(offset + LogFormat.frameHeaderSize)..<(offset + LogFormat.frameHeaderSize + length)]), continuing: crc)
    for index in 0..<4 { bytes[offset + 24 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
}

/// A growable byte buffer with unchecked appends: the encoder's output.
///
/// `[UInt8].append` checks uniqueness and capacity through generic code on
/// every call, which was a tenth of encoding time; this writes with a pointer
/// store. Non-copyable, so the memory has exactly one owner.
struct ByteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always) private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private mutating func grow(_ needed: Int) {
        let newCapacity = Swift.max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) { append(UnsafeRawBufferPointer(bytes)) }

    mutating func append<C: Collection>(contentsOf bytes: C) where C.Element == UInt8 {
        if let done: Void = bytes.withContiguousStorageIfAvailable({ append($0) }) { return done }
        reserve(bytes.count)
        for byte in bytes { base[count] = byte; count += 1 }
    }

    subscript(position: Int) -> UInt8 {
        get { precondition(position < count); return base[position] }
        set { precondition(position < count); base[position] = newValue }
    }

    /// A copy of the bytes in `range`.
    func copy(_ range: Range<Int>) -> [UInt8] {
        precondition(range.upperBound <= count)
        return Array(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    /// Overwrites bytes from `position` on with `bytes`, which must fit.
    mutating func overwrite(at position: Int, with bytes: [UInt8]) {
        precondition(position + bytes.count <= count)
        bytes.withUnsafeBufferPointer { (base + position).update(from: $0.baseAddress!, count: $0.count) }
    }

    /// Replaces the byte at `position` with `bytes`, moving what follows.
    mutating func replaceByte(at position: Int, with bytes: [UInt8]) {
        precondition(position < count && !bytes.isEmpty)
        let extra = bytes.count - 1
        reserve(extra)
        (base + position + 1 + extra).update(from: base + position + 1, count: count - position - 1)
        count += extra
        overwrite(at: position, with: bytes)
    }

    /// The bytes written so far, as an array.
    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}

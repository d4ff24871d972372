import Foundation

/// The one growing byte buffer that every container of one `ValueEncoder.encode`
/// call appends to, and the stack of containers that are still open.
///
/// Codable never tells a container that it is finished, so a container's
/// element count is written as a one-byte placeholder and patched when the
/// container is closed: when the value that opened it returns from
/// `encode(to:)`, or when its parent writes its next element. Counts below 128
/// fit the placeholder; larger ones shift the container's bytes once.
final class ValueWriter {
    /// An open array or map.
    struct Frame {
        /// Offset of the count placeholder byte.
        var header: Int
        var count = 0
        /// Identifies the container, so that a stale container value cannot
        /// write into a newer frame that reuses its slot.
        var id: Int
        /// How many elements make one sortable unit, or 0 to keep encode
        /// order: 1 for a `Dictionary`'s map entries and a `Set`'s elements,
        /// 2 for a `Dictionary`'s key–value pairs. Sorted on close, because
        /// their iteration order is not deterministic.
        var sortUnit: Int
        var sorted: Bool { sortUnit > 0 }
        var isMap: Bool
        /// Start offsets of the entries, kept only for sorted frames.
        var entryStarts: [Int] = []
        /// Values written through `superEncoder`, spliced in at close.
        var deferred: [(key: String?, writer: ValueWriter)] = []
    }

    // Exclusivity is not checked at run time on these properties: the checks
    // cost a third of encoding time. This is safe because a writer is confined
    // to the one `encode` call (one thread) that made it, and no method keeps
    // an access to a property open across a call back into the writer: every
    // mutation is a single append or element assignment.
    @exclusivity(unchecked) var bytes: ByteBuffer
    @exclusivity(unchecked) var frames: [Frame] = []
    /// The coding path of the value being encoded now.
    @exclusivity(unchecked) var path: [any CodingKey] = []
    @exclusivity(unchecked) var nextID = 0
    /// A misuse found where Codable gives no way to throw (opening a
    /// container too deep); thrown by the next call that can.
    @exclusivity(unchecked) var pendingError: EncodingError? {
        didSet { hasPendingError = pendingError != nil }
    }
    /// Set only while learning `dictionaryCodingKeyType`.
    var recordsKeyType = false
    var recordedKeyType: ObjectIdentifier?
    /// `pendingError != nil`, without copying the error on every close.
    @exclusivity(unchecked) private(set) var hasPendingError = false

    init(capacity: Int = 256) {
        bytes = ByteBuffer(capacity: capacity)
    }

    // MARK: Scalars

    @inline(__always) func tag(_ tag: ValueTag) { bytes.append(tag.rawValue) }

    @inline(__always) func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    @inline(__always) func int(_ value: Int64) {
        tag(.int)
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    @inline(__always) func uint(_ value: UInt64) {
        if value <= UInt64(Int64.max) { int(Int64(value)) } else { tag(.uint); varint(value) }
    }

    @inline(__always) func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append($0) }
    }

    @inline(__always) func double(_ value: Double) {
        tag(.double)
        fixed64(value.bitPattern)
    }

    @inline(__always) func date(_ value: Date) {
        tag(.date)
        fixed64(value.timeIntervalSinceReferenceDate.bitPattern)
    }

    func uuid(_ value: UUID) {
        tag(.uuid)
        withUnsafeBytes(of: value.uuid) { bytes.append($0) }
    }

    @inline(__always) func bool(_ value: Bool) { tag(value ? .true : .false) }

    /// A string without its tag: a map key.
    @inline(__always) func rawString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(utf8)
        }
    }

    @inline(__always) func string(_ value: String) {
        tag(.string)
        rawString(value)
    }

    func rawBytes<C: Collection>(_ value: C) where C.Element == UInt8 {
        tag(.bytes)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }
}

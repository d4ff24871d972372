/// One record as read back from a log file.
public struct LogRecord: Sendable, Equatable {
    /// The log sequence number: one more than the record before it.
    public var lsn: UInt64
    public var type: RecordType
    /// The payload, decompressed.
    public var payload: [UInt8]
    /// Where the frame starts in its file.
    public var offset: Int64
    /// The frame's size on disk, header included.
    public var frameSize: Int
    /// Whether the payload was stored LZ4-compressed.
    public var compressed: Bool
    /// The highest LSN the writer knew to be durable when it wrote this record.
    public var syncedLSN: UInt64
}

/// Encoding and decoding of one frame:
/// `length(u32) type(u8) flags(u8) reserved(u16) lsn(u64) syncedLSN(u64) crc(u32) payload`.
///
/// The CRC32C covers the generation (8 bytes LE, not stored in the frame), the
/// first 24 header bytes — the length included, so a damaged length can never
/// point at a payload that happens to verify — and the stored payload.
enum RecordFrame {
    /// The checksum state after the generation salt; computed once per file.
    static func seed(generation: UInt64) -> UInt32 {
        var salt: [UInt8] = []
        salt.appendLittleEndian(generation)
        return CRC32C.checksum(salt)
    }

    /// The bytes ``append(to:stored:type:flags:lsn:syncedLSN:seed:sealing:)``
    /// adds for a payload stored as `storedCount` bytes, sealed or not.
    static func size(storedCount: Int, sealed: Bool) -> Int {
        LogFormat.frameHeaderSize + storedCount + (sealed ? EncryptionFormat.envelopeOverhead : 0)
    }

    /// Appends one frame to `buffer`. `stored` is the payload as a plain log
    /// stores it (already compressed when `flags` contains `.lz4`); with
    /// `sealing`, the frame holds its envelope instead and has ``RecordFlags/sealed``.
    /// The checksum covers what is on disk, so a torn or damaged frame is
    /// found without the key.
    static func append(
        to buffer: inout [UInt8], stored: [UInt8], type: RecordType, flags: RecordFlags,
        lsn: UInt64, syncedLSN: UInt64, seed: UInt32, sealing: Sealing? = nil
    ) {
        let start = buffer.count
        let length = stored.count + (sealing == nil ? 0 : EncryptionFormat.envelopeOverhead)
        buffer.appendLittleEndian(UInt32(length))
        buffer.append(type.rawValue)
        buffer.append(sealing == nil ? flags.rawValue : flags.union(.sealed).rawValue)
        buffer.appendLittleEndian(UInt16(0))
        buffer.appendLittleEndian(lsn)
        buffer.appendLittleEndian(syncedLSN)
        buffer.appendLittleEndian(UInt32(0))
        if let sealing {
            let associatedData = buffer.withUnsafeBytes {
                Envelope.recordAssociatedData(generation: sealing.generation, frameHeader: UnsafeRawBufferPointer(rebasing: $0[start...]))
            }
            stored.withUnsafeBytes {
                Envelope.seal($0, cipher: sealing.cipher, nonce: sealing.nonce, associatedData: associatedData, appendingTo: &buffer)
            }
        } else {
            buffer.append(contentsOf: stored)
        }
        let crc = buffer.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(start + LogFormat.frameHeaderSize)...]),
                            continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[start..<(start + 24)]), continuing: seed))
        }
        for index in 0..<4 { buffer[start + 24 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
    }

    /// What reading a verified frame's payload gave.
    enum Payload {
        case payload([UInt8])
        /// Why it is not a payload: it did not decompress or authenticate.
        case damaged(DamageReason)
    }

    /// How one frame is sealed: the log's cipher and generation, and the nonce it takes.
    struct Sealing {
        var cipher: any PayloadCipher
        var generation: UInt64
        var nonce: (salt: UInt64, counter: UInt32)
    }

    /// How the frames of one encrypted log are opened.
    struct Opening: Sendable {
        var cipher: any PayloadCipher
        var generation: UInt64
    }

    /// What lies at an offset.
    enum Parsed {
        /// A frame that verifies. The payload is not yet decompressed.
        case frame(Header)
        /// 28 zero bytes, or fewer than 28 bytes that are all zero: the end of
        /// written data in a preallocated file, if everything after is zero too.
        case zeros
        case damage(DamageReason)
    }

    /// A verified frame header.
    struct Header {
        var length: Int
        var typeByte: UInt8
        var flags: RecordFlags
        var reserved: UInt16
        var lsn: UInt64
        var syncedLSN: UInt64
        var frameSize: Int { LogFormat.frameHeaderSize + length }
    }

    /// Parses and verifies the frame at `offset`. Never reads outside `bytes`
    /// and allocates nothing.
    static func parse(_ bytes: UnsafeRawBufferPointer, at offset: Int, seed: UInt32) -> Parsed {
        let remaining = bytes.count - offset
        guard remaining >= LogFormat.frameHeaderSize else {
            return bytes[offset...].allSatisfy { $0 == 0 } ? .zeros : .damage(.truncatedFrameHeader)
        }
        let length = Int(bytes.littleEndian(at: offset, as: UInt32.self))
        let lsn: UInt64 = bytes.littleEndian(at: offset + 8)
        if length == 0 && lsn == 0
            && bytes[offset..<(offset + LogFormat.frameHeaderSize)].allSatisfy({ $0 == 0 }) {
            return .zeros
        }
        guard length <= LogFormat.maxStoredSize else { return .damage(.lengthTooLarge) }
        guard length <= remaining - LogFormat.frameHeaderSize else { return .damage(.truncatedPayload) }
        let covered = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 24)])
        let payloadStart = offset + LogFormat.frameHeaderSize
        let payload = UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<(payloadStart + length)])
        let crc = CRC32C.checksum(payload, continuing: CRC32C.checksum(covered, continuing: seed))
        guard crc == bytes.littleEndian(at: offset + 24, as: UInt32.self) else { return .damage(.checksumMismatch) }
        return .frame(Header(
            length: length, typeByte: bytes[offset + 4], flags: RecordFlags(rawValue: bytes[offset + 5]),
            reserved: bytes.littleEndian(at: offset + 6), lsn: lsn, syncedLSN: bytes.littleEndian(at: offset + 16)))
    }

    /// Why a verified frame cannot be interpreted by this version, if it cannot.
    static func unsupported(_ header: Header) -> UnsupportedReason? {
        guard RecordType(rawValue: header.typeByte) != nil else { return .unknownRecordType(header.typeByte) }
        guard header.flags.isSubset(of: .known) else { return .unknownFlags(header.flags.rawValue) }
        guard header.reserved == 0 else { return .reservedField(header.reserved) }
        return nil
    }

    /// The payload of a verified, supported frame: opened when the log is
    /// encrypted (`opening`), then decompressed. A frame that is sealed in
    /// a plain log, or not sealed in an encrypted one, or whose envelope
    /// does not authenticate, is `.authenticationFailed`; a compressed
    /// payload that is malformed, `.decompressionFailed`. The declared size
    /// is checked against the format's cap and LZ4's maximum ratio before
    /// anything is allocated.
    static func payload(
        of header: Header, in bytes: UnsafeRawBufferPointer, at offset: Int, opening: Opening?
    ) -> RecordFrame.Payload {
        let start = offset + LogFormat.frameHeaderSize
        let stored = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + header.length)])
        guard header.flags.contains(.sealed) == (opening != nil) else { return .damaged(.authenticationFailed) }
        guard let opening else { return unstored(stored, flags: header.flags) }
        let associatedData = Envelope.recordAssociatedData(
            generation: opening.generation, frameHeader: UnsafeRawBufferPointer(rebasing: bytes[offset..<start]))
        guard let plaintext = Envelope.open(stored, cipher: opening.cipher, associatedData: associatedData) else {
            return .damaged(.authenticationFailed)
        }
        return plaintext.withUnsafeBytes { unstored($0, flags: header.flags) }
    }

    /// The payload of what a plain frame stores (or a sealed one sealed):
    /// itself, or decompressed.
    static func unstored(_ stored: UnsafeRawBufferPointer, flags: RecordFlags) -> RecordFrame.Payload {
        guard flags.contains(.lz4) else {
            guard stored.count <= LogFormat.maxPayloadSize else { return .damaged(.lengthTooLarge) }
            return .payload(Array(stored))
        }
        let prefix = LogFormat.compressedPrefixSize
        guard stored.count > prefix else { return .damaged(.decompressionFailed) }
        let declared = Int(stored.littleEndian(at: 0, as: UInt32.self))
        let block = UnsafeRawBufferPointer(rebasing: stored[prefix...])
        guard declared <= LogFormat.maxPayloadSize, declared <= block.count * LogFormat.maxCompressionRatio + 16,
              let payload = LZ4.decompress(block, decompressedCount: declared)
        else { return .damaged(.decompressionFailed) }
        return .payload(payload)
    }

    /// The stored form of `payload`: LZ4-compressed with its length prefix when
    /// `compress` is set and that saves space, else the payload itself.
    static func store(_ payload: [UInt8], compress: Bool) -> (stored: [UInt8], flags: RecordFlags) {
        guard compress, payload.count >= LogFormat.compressionThreshold else { return (payload, []) }
        var prefix: [UInt8] = []
        prefix.appendLittleEndian(UInt32(payload.count))
        // The block goes straight after its prefix, not into a buffer of its own first.
        guard let stored = payload.withUnsafeBytes({ LZ4.compress($0, after: prefix) }), stored.count < payload.count
        else { return (payload, []) }
        return (stored, .lz4)
    }
}

// libFuzzer target: any bytes as a snapshot file, read and salvaged
// without a key and with FuzzCipher's. Run: Fuzz/Targets/run Snapshot
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSnapshot(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A checksum failure is the expected answer for almost every input; the
    // target exists to prove no input crashes or over-allocates.
    for cipher in [nil, FuzzCipher()] as [FuzzCipher?] {
        if let snapshot = try? SnapshotFile(bytes: bytes, path: "fuzz.snap", cipher: cipher) {
            try? snapshot.forEachItem { _ in }
        }
        _ = try? SnapshotFile.salvage(bytes: bytes, path: "fuzz.snap", cipher: cipher)
    }
    return 0
}

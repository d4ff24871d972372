// libFuzzer target: any bytes as a snapshot file, read (whole, and with
// its entries in place, as an open reads them: the same items and the same
// failure either way) and salvaged, without a key and with FuzzCipher's.
// Run: Fuzz/Targets/run Snapshot
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSnapshot(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A checksum failure is the expected answer for almost every input; the
    // target exists to prove no input crashes or over-allocates.
    for cipher in [nil, FuzzCipher()] as [FuzzCipher?] {
        if let snapshot = try? SnapshotFile(bytes: bytes, path: "fuzz.snap", cipher: cipher) {
            var whole: [SnapshotItem] = [], inPlace: [SnapshotItem] = []
            let wholeRead = (try? snapshot.forEachItem { whole.append($0) }) != nil
            let inPlaceRead = (try? snapshot.forEachItem(entriesInPlace: { entry in
                inPlace.append(.entry(table: entry.table, key: Array(entry.chunk[entry.key]), value: Array(entry.chunk[entry.value])))
            }, { inPlace.append($0) })) != nil
            precondition(whole == inPlace && wholeRead == inPlaceRead, "entries read in place differ from entries read whole")
        }
        _ = try? SnapshotFile.salvage(bytes: bytes, path: "fuzz.snap", cipher: cipher)
    }
    return 0
}

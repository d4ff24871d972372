// libFuzzer target: any bytes as a log file, read without a key and with
// FuzzCipher's (encrypted v4 seeds are sealed with it). Reading must end in
// records, a clean end, a torn tail or a typed error — never a crash, a
// hang, or an allocation sized by an untrusted length. Run: Fuzz/Targets/run LogReader
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for (policy, cipher) in [(RecoveryPolicy.strict, nil), (.salvage, nil), (.strict, FuzzCipher()), (.salvage, FuzzCipher())] {
        guard var reader = try? LogReader(bytes: bytes, path: "fuzz.log", policy: policy, cipher: cipher) else { continue }
        var previous: UInt64?
        while let record = try? reader.next() {
            // LSNs strictly increase whatever the bytes say.
            if let previous, record.lsn <= previous { fatalError("LSN \(record.lsn) after \(previous)") }
            previous = record.lsn
        }
    }
    return 0
}

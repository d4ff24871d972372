// libFuzzer target: any bytes as a log file. Reading must end in records, a
// clean end, a torn tail or a typed error — never a crash, a hang, or an
// allocation sized by an untrusted length. Run: Fuzz/Targets/run LogReader
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for policy in [RecoveryPolicy.strict, .salvage] {
        guard var reader = try? LogReader(bytes: bytes, path: "fuzz.log", policy: policy) else { continue }
        var previous: UInt64?
        while let record = try? reader.next() {
            // LSNs strictly increase whatever the bytes say.
            if let previous, record.lsn <= previous { fatalError("LSN \(record.lsn) after \(previous)") }
            previous = record.lsn
        }
    }
    return 0
}

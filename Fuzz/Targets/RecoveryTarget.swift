// libFuzzer target: recovery over a store directory whose files come from
// the input: the first two bytes give the snapshot's length, the snapshot
// follows, the rest is a log; each is judged without and with a clean
// close, and without a key and with FuzzCipher's. Run: Fuzz/Targets/run Recovery
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecovery(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let split = min(Int(bytes[0]) | Int(bytes[1]) << 8, bytes.count - 2)
    let fileSystem = SimulatedFileSystem()
    let directory = StoreDirectory(path: "/s", fileSystem: fileSystem)
    // The simulated file system cannot fail here: no faults are armed.
    try? fileSystem.createDirectory(at: "/s")
    if split > 0 { fileSystem.setContents(Array(bytes[2..<(2 + split)]), of: directory.snapshotPath(generation: 1)) }
    fileSystem.setContents(Array(bytes[(2 + split)...]), of: directory.logPath(generation: 1))
    // The same files judged with no clean close, and with one that proves
    // an LSN taken from the input (the last 28 bytes read as a CLOSED
    // marker when they verify, else the input's length): the chain's
    // judgement of what a clean close proves lost.
    let marker = CleanClose(decoding: Array(bytes.suffix(CleanClose.size)))
    let closes = [nil, CleanClose(lastLSN: marker.lastLSN ?? UInt64(bytes.count % 97))]
    for policy in [RecoveryPolicy.strict, .salvage] {
        for (close, cipher) in closes.flatMap({ close in [(close, nil), (close, FuzzCipher())] as [(CleanClose?, FuzzCipher?)] }) {
            let chain = LogChain(directory: directory, policy: policy, setAsideDamaged: true, cleanClose: close, cipher: cipher)
            guard let listing = try? directory.list() else { continue }
            // Typed errors are fine; only a crash or hang is a finding.
            _ = try? chain.recover(listing: listing, loadSnapshot: { try $0.forEachItem { _ in } }, apply: { _, _ in })
        }
    }
    return 0
}

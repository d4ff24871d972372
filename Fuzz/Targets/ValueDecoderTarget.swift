// libFuzzer target: any bytes as an encoded value. Run: Fuzz/Targets/run ValueDecoder
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzValueDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Decoding garbage must throw a DecodingError, never trap.
    if let document = try? Document(decodingBinary: bytes) {
        // What decodes re-encodes to bytes that decode and re-encode to the
        // same bytes (compared as bytes: NaN is not equal to itself).
        let encoded = document.binaryEncoded()
        guard let again = try? Document(decodingBinary: encoded), again.binaryEncoded() == encoded else {
            fatalError("re-encoded document does not round-trip")
        }
    }
    return 0
}

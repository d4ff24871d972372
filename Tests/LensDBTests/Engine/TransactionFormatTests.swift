import Testing
@testable import LensDB

/// Operation 7 (log format v3): the bytes the article shows, and payloads
/// that must not parse.
@Suite struct TransactionFormatTests {
    @Test func articleExamplePatchBytesAreWhatTheEncoderWrites() throws {
        let operations: [Operation] = [
            .patchRoot(name: "app", path: ["protection", "enabled"], value: .encoded([0x02])),
            .patchRoot(name: "app", path: ["flags", "beta"], value: nil),
        ]
        let expected: [UInt8] = [
            0x02,
            0x07, 0x03, 0x61, 0x70, 0x70,
            0x02, 0x0A, 0x70, 0x72, 0x6F, 0x74, 0x65, 0x63, 0x74, 0x69, 0x6F, 0x6E,
            0x07, 0x65, 0x6E, 0x61, 0x62, 0x6C, 0x65, 0x64,
            0x01, 0x01, 0x02,
            0x07, 0x03, 0x61, 0x70, 0x70,
            0x02, 0x05, 0x66, 0x6C, 0x61, 0x67, 0x73, 0x04, 0x62, 0x65, 0x74, 0x61,
            0x02,
        ]
        let bytes = try TransactionFormat.encode(operations)
        #expect(bytes == expected)
        let decoded = try #require(TransactionFormat.decode(bytes))
        guard case let .patchRoot("app", ["protection", "enabled"], value?) = decoded[0], case .patchRoot("app", ["flags", "beta"], nil) = decoded[1] else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(try value.bytes() == [0x02])
    }

    @Test func patchesWithoutKeysOrWithAnUnknownChangeDoNotParse() {
        let noKeys: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x00, 0x02]
        let unknownChange: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x01, 0x01, 0x62, 0x03]
        let cutValue: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x01, 0x01, 0x62, 0x01, 0x05, 0x02]
        let tooDeep: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x81, 0x02] + Array(repeating: [0x01, 0x62], count: 257).flatMap { $0 } + [0x02]
        for payload in [noKeys, unknownChange, cutValue, tooDeep] {
            #expect(TransactionFormat.decode(payload) == nil, "\(payload.prefix(10))")
        }
    }
}

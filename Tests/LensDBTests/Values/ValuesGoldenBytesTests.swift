import Foundation
import Testing
@testable import LensDB

/// The worked example of the "Value format" article.
struct Pet: Codable, Equatable {
    var name: String
    var age: Int
    var weight: Double
    var tags: [String]
    var born: Date
    var owner: String?
    var visits: [String: Int]
}

@Suite struct ValuesGoldenBytesTests {
    @Test func articleExampleBytesAreWhatTheEncoderWrites() throws {
        let pet = Pet(name: "Rex", age: 3, weight: 1.5, tags: ["good"], born: Date(timeIntervalSinceReferenceDate: 0), owner: nil, visits: ["vet": -1, "park": 64])
        let bytes = try ValueEncoder().encode(pet)
        let expected: [UInt8] = [
            0x09, 0x06,                                            // map, 6 entries
            0x04, 0x6E, 0x61, 0x6D, 0x65, 0x06, 0x03, 0x52, 0x65, 0x78,  // "name": string "Rex"
            0x03, 0x61, 0x67, 0x65, 0x03, 0x06,                    // "age": int 3 (zigzag 6)
            0x06, 0x77, 0x65, 0x69, 0x67, 0x68, 0x74,              // "weight":
            0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F,  //   double 1.5
            0x04, 0x74, 0x61, 0x67, 0x73, 0x08, 0x01,              // "tags": array, 1 element
            0x06, 0x04, 0x67, 0x6F, 0x6F, 0x64,                    //   string "good"
            0x04, 0x62, 0x6F, 0x72, 0x6E,                          // "born":
            0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //   date 0.0 (2001-01-01)
            0x06, 0x76, 0x69, 0x73, 0x69, 0x74, 0x73, 0x09, 0x02,  // "visits": map, 2 entries
            0x04, 0x70, 0x61, 0x72, 0x6B, 0x03, 0x80, 0x01,        //   "park": int 64 (zigzag 128)
            0x03, 0x76, 0x65, 0x74, 0x03, 0x01,                    //   "vet": int -1 (zigzag 1)
        ]
        #expect(bytes == expected)
        #expect(bytes.count == 84)
        #expect(try Document(decodingBinary: bytes).jsonString()
            == #"{"age":3,"born":"2001-01-01T00:00:00.000Z","name":"Rex","tags":["good"],"visits":{"park":64,"vet":-1},"weight":1.5}"#)
        #expect(try ValueDecoder().decode(Pet.self, from: bytes) == pet)
    }
}

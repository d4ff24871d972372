import Foundation
import LensTestSupport
import Testing
@testable import LensDB

struct Slim: Codable, Equatable {
    var name: String
    var age: Int
}

/// Misuses Codable: two values into one single value container.
struct TwiceWritten: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(1)
        try container.encode(2)
    }
}

struct Chain: Codable, Equatable {
    var next: [Chain]
}

struct SlimWithOptional: Codable, Equatable {
    var name: String
    var nickname: String?
    var email: String?
}

func sampleCustomer() -> Customer {
    Customer(
        id: -9, name: "Zoë", address: Address(street: "1 Main St", city: "Paris", zip: "75001"),
        previous: [Address(street: "2", city: "Lyon", zip: nil)], nickname: "z", scores: [1, nil], tags: ["t"]
    )
}

/// True when `body` throws a `DecodingError`; any other outcome but success is a failure.
func throwsDecodingErrorOrSucceeds(_ body: () throws -> Void) -> Bool {
    do { try body(); return true } catch is DecodingError { return true } catch { return false }
}

@Suite struct ValuesRobustnessTests {
    @Test func everyTruncationThrowsADecodingError() throws {
        let bytes = try ValueEncoder().encode(sampleCustomer())
        for length in 0..<bytes.count {
            let cut = Array(bytes[..<length])
            #expect(throws: DecodingError.self) { try ValueDecoder().decode(Customer.self, from: cut) }
            #expect(throws: DecodingError.self) { try Document(decodingBinary: cut) }
        }
    }

    @Test func randomGarbageAndFlippedBytesNeverCrash() throws {
        var random = SeededGenerator.fromEnvironment("randomGarbageAndFlippedBytesNeverCrash")
        let valid = try ValueEncoder().encode(sampleCustomer())
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = random.bytes(Int.random(in: 0...64, using: &random))
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            #expect(throwsDecodingErrorOrSucceeds { _ = try ValueDecoder().decode(Customer.self, from: bytes) })
            #expect(throwsDecodingErrorOrSucceeds { _ = try Document(decodingBinary: bytes) })
            #expect(throwsDecodingErrorOrSucceeds { _ = try ValueDecoder().decode([String: [Int?]].self, from: bytes) })
        }
    }

    @Test func hugeLengthsAreRejectedBeforeAllocating() {
        let hugeArray: [UInt8] = [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        let hugeString: [UInt8] = [0x06, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x61]
        let overlongVarint: [UInt8] = [0x03] + [UInt8](repeating: 0xFF, count: 11)
        for bytes in [hugeArray, hugeString, overlongVarint] {
            #expect(throws: DecodingError.self) { try Document(decodingBinary: bytes) }
            #expect(throws: DecodingError.self) { try ValueDecoder().decode([Int].self, from: bytes) }
        }
    }

    @Test func nestingBeyondTheLimitThrowsInsteadOfOverflowingTheStack() {
        let deep: [UInt8] = Array(repeating: [0x08, 0x01] as [UInt8], count: 100_000).flatMap { $0 }
        #expect(throws: DecodingError.self) { try Document(decodingBinary: deep) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Slim.self, from: [0x09, 0x01, 0x01, 0x78] + deep) }
        #expect(throws: DecodingError.self) { try Document(json: String(repeating: "[", count: 100_000)) }
        var document: Document = .null
        for _ in 0..<300 { document = [document] }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(document) }
    }

    @Test func recursiveTypeNestedNearTheLimitRoundTripsAndBeyondItThrows() throws {
        var chain = Chain(next: [])
        for _ in 0..<120 { chain = Chain(next: [chain]) }  // 2 levels (map, array) a link
        #expect(try roundTrip(chain) == chain)
        for _ in 0..<20 { chain = Chain(next: [chain]) }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(chain) }
        // Hostile bytes: the same shape, far deeper than any encoder would write.
        let link: [UInt8] = [0x09, 0x01, 0x04] + Array("next".utf8) + [0x08, 0x01]
        let deep = Array(repeating: link, count: 10_000).flatMap { $0 }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Chain.self, from: deep) }
    }

    @Test func unknownKeysAreSkippedAndMissingOptionalsAreNil() throws {
        let wide = try ValueEncoder().encode(sampleCustomer())
        let narrow = try ValueDecoder().decode(Slim.self, from: try ValueEncoder().encode(["name": Document("Zoë"), "age": 3, "extra": [1, 2, ["x": nil]]]))
        #expect(narrow == Slim(name: "Zoë", age: 3))
        let optional = try ValueDecoder().decode(SlimWithOptional.self, from: wide)
        #expect(optional == SlimWithOptional(name: "Zoë", nickname: "z", email: nil))
        let explicitNull = try ValueEncoder().encode(["name": "n", "nickname": nil, "email": "e"] as Document)
        #expect(try ValueDecoder().decode(SlimWithOptional.self, from: explicitNull) == SlimWithOptional(name: "n", nickname: nil, email: "e"))
    }

    @Test func missingRequiredKeyThrowsKeyNotFoundWithItsPath() throws {
        let bytes = try ValueEncoder().encode(["address": ["street": "s"] as Document])
        do {
            _ = try ValueDecoder().decode(Customer.self, from: bytes)
            Issue.record("decoding succeeded")
        } catch let DecodingError.keyNotFound(key, _) {
            #expect(key.stringValue == "id")
        }
    }

    @Test func typeMismatchCarriesTheCodingPath() throws {
        let bad: Document = ["name": "n", "age": 1, "address": ["street": "s", "city": 5], "id": 1, "previous": [], "scores": [], "tags": []]
        do {
            _ = try ValueDecoder().decode(Customer.self, from: ValueEncoder().encode(bad))
            Issue.record("decoding succeeded")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["address", "city"])
        }
    }

    @Test func numbersOutOfRangeThrowTypeMismatch() throws {
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(UInt8.self, from: ValueEncoder().encode(300)) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Int64.self, from: ValueEncoder().encode(UInt64.max)) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(UInt.self, from: ValueEncoder().encode(-1)) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Float.self, from: ValueEncoder().encode(1e300)) }
    }

    @Test func bytesAfterTheValueThrowDataCorrupted() throws {
        let bytes = try ValueEncoder().encode(5) + [0x00]
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Int.self, from: bytes) }
    }

    @Test func writingASingleValueContainerTwiceThrows() {
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(TwiceWritten()) }
    }

    @Test func tagsAreTheirOwnRawValuesInMemory() {
        for tag in ValueTag.allCases { #expect(unsafeBitCast(tag.rawValue, to: ValueTag.self) == tag) }
        #expect(ValueTag.allCases.map(\.rawValue) == Array(0...ValueTag.uuid.rawValue))
    }
}

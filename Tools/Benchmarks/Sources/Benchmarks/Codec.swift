import Foundation
import LensDB

/// The benchmark's entity: the shape of a typical stored row.
struct CodecPerson: Codable, Equatable, Sendable {
    var id: Int64
    var name: String
    var email: String
    var city: String
    var age: Int
    var score: Double
    var tags: [String]
    var createdAt: Date
}

extension CodecPerson {
    static let cities = ["Paris", "Lyon", "Berlin", "Tokyo", "Zürich"]

    /// The `i`th person of the benchmark's data set.
    static func sample(_ i: Int) -> CodecPerson {
        let tags: [String] = ["member", i % 2 == 0 ? "even" : "odd"]
        let created = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
        return CodecPerson(
            id: Int64(i), name: "Person \(i)", email: "person\(i)@example.com", city: cities[i % cities.count],
            age: 18 + i % 60, score: Double(i) * 1.5, tags: tags, createdAt: created
        )
    }
}

/// Encode and decode of `CodecPerson` with LensDB's value codec against
/// Foundation's JSONEncoder/JSONDecoder, in the same run.
let codecWorkload = Workload(
    name: "codec",
    summary: "ValueEncoder/ValueDecoder vs JSONEncoder/JSONDecoder, Person objects/s"
) {
    let people: [CodecPerson] = (0..<1000).map(CodecPerson.sample)
    let lensEncoder = ValueEncoder()
    let lensDecoder = ValueDecoder()
    let jsonEncoder = JSONEncoder()
    let jsonDecoder = JSONDecoder()
    let lensBytes = try people.map { try lensEncoder.encode($0) }
    let jsonBytes = try people.map { try jsonEncoder.encode($0) }
    guard try lensBytes.enumerated().allSatisfy({ try lensDecoder.decode(CodecPerson.self, from: $1) == people[$0] }) else {
        throw CocoaError(.coderInvalidValue)
    }

    let lensEncode = try rate(operations: people.count) { for person in people { _ = try lensEncoder.encode(person) } }
    let jsonEncode = try rate(operations: people.count) { for person in people { _ = try jsonEncoder.encode(person) } }
    let lensDecode = try rate(operations: people.count) { for bytes in lensBytes { _ = try lensDecoder.decode(CodecPerson.self, from: bytes) } }
    let jsonDecode = try rate(operations: people.count) { for bytes in jsonBytes { _ = try jsonDecoder.decode(CodecPerson.self, from: bytes) } }

    let lensSize = Double(lensBytes.map(\.count).reduce(0, +)) / Double(people.count)
    let jsonSize = Double(jsonBytes.map(\.count).reduce(0, +)) / Double(people.count)
    printTable(
        ["operation", "LensDB objects/s", "JSON objects/s", "ratio", "LensDB bytes/object", "JSON bytes/object"],
        [
            ["encode", format(lensEncode), format(jsonEncode), format(lensEncode / jsonEncode) + "×", format(lensSize), format(jsonSize)],
            ["decode", format(lensDecode), format(jsonDecode), format(lensDecode / jsonDecode) + "×", format(lensSize), format(jsonSize)],
        ]
    )
}

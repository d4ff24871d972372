import Foundation
import LensTestSupport
@testable import LensDB

/// The person of the table tests and benchmarks.
struct Person: Entity, Equatable {
    var id: Int64
    var name: String
    var email: String
    var city: String
    var age: Int
    var score: Double
    var nickname: String?

    static let cities = ["Paris", "Lyon", "Lille", "Nice", "Brest", "Tours"]

    static func random(_ id: Int64, using random: inout SeededGenerator) -> Person {
        Person(id: id, name: ["Ana", "Bea", "Cy", "Dan", "Eve", "Flo"].randomElement(using: &random)! + "\(id % 7)",
               email: "p\(id)@example.com", city: cities.randomElement(using: &random)!,
               age: Int.random(in: 10...70, using: &random), score: Double(Int.random(in: 0...40, using: &random)) / 4,
               nickname: Bool.random(using: &random) ? nil : ["al", "bo", "cy"].randomElement(using: &random))
    }
}

/// An amount a program indexes as an integer, or as a double: a type that
/// gives both forms, which compare by their exact values.
enum MixedAmount: Codable, Hashable, Sendable, IndexableValue {
    case whole(Int64)
    case real(Double)

    var indexValue: IndexValue {
        switch self {
        case let .whole(value): .int(value)
        case let .real(value): .double(value)
        }
    }
}

let personIndexes: [Index<Person>] = [
    .on(\.city), .on(\.age), .on(\.score), .on(\.city, \.age), .on(\.city, \.score), .unique(\.email), .on(\.nickname),
]

/// A store on a simulated file system with invariant checks, for table tests.
func tableStore(_ fileSystem: SimulatedFileSystem = SimulatedFileSystem(), path: String = "/t.lensdb", checkingInvariants: Bool = true) throws -> Store {
    var options = StoreOptions()
    options.fileSystem = fileSystem
    options.checksInvariants = checkingInvariants
    options.compactionLogRatio = nil
    options.log.backgroundSyncInterval = nil
    options.log.preallocationChunk = 4096
    return try Store(at: path, options: options)
}

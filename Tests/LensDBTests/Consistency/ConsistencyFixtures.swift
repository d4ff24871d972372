import LensDB
import Synchronization

/// An entity that nests another: pushing one updates holders of the other.
struct Order: Entity, Equatable {
    var id: Int64
    var buyer: Person
    var note: String
}

/// An entity with no nested entities, of a type unrelated to Person.
struct Tag: Entity, Hashable {
    var id: String
    var label: String
}

/// A value holding a Person in each of the six nested positions.
struct SixPositions: Codable, Sendable, Equatable {
    var property: Person
    var optional: Person?
    var array: [Person]
    var grid: [[Person]]
    var byRole: [String: Person]
    var order: Order
    var title: String
}

/// A nonisolated holder: the value behind a mutex; counts reads, so a
/// test can tell whether a push looked at it.
final class Holder<Value: Codable & Sendable>: ConsistentHolder {
    private let storage: Mutex<Value>
    private let readCount = Mutex(0)

    init(_ value: Value) { storage = Mutex(value) }

    var consistentValue: Value {
        get {
            readCount.withLock { $0 += 1 }
            return storage.withLock { $0 }
        }
        set { storage.withLock { $0 = newValue } }
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    var reads: Int { readCount.withLock { $0 } }
}

/// A view model on the main actor; records whether each write ran there.
@MainActor
final class ScreenModel: MainActorConsistentHolder {
    var consistentValue: [Person] {
        didSet { writesOnMainActor += 1 }
    }
    var writesOnMainActor = 0

    init(_ people: [Person]) { consistentValue = people }
}

/// A holder that is an actor.
actor PersonActor: ActorConsistentHolder {
    var consistentValue: Person?
    init(_ person: Person?) { consistentValue = person }
}

func person(_ id: Int64, _ name: String, city: String = "Paris") -> Person {
    Person(id: id, name: name, email: "p\(id)@example.com", city: city, age: 30, score: 1)
}

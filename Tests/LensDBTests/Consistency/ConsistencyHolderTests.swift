import Foundation
import LensDB
import LensTestSupport
import Testing

/// Holders: weakly held, isolated to actors, and the registry under concurrency.
@Suite struct ConsistencyHolderTests {
    @Test func holdersAreReleasedWhenTheProgramDropsThem() {
        let manager = ConsistencyManager()
        var holder: Holder<[Person]>? = Holder([person(1, "A")])
        weak let released = holder
        manager.register(holder!)
        let kept = Holder([person(1, "A")])
        manager.register(kept)
        manager.register(kept)
        #expect(manager.holderCount == 2, "registering twice registers once")
        holder = nil
        #expect(released == nil, "the manager does not keep a holder alive")
        #expect(manager.holderCount == 1, "the released holder is pruned")
        manager.push(person(1, "B"))
        #expect(kept.value.first?.name == "B")
        manager.unregister(kept)
        #expect(manager.holderCount == 0)
        manager.push(person(1, "C"))
        #expect(kept.value.first?.name == "B", "an unregistered holder is left alone")
    }

    @MainActor
    @Test func aMainActorHolderIsUpdatedOnTheMainActor() async {
        let manager = ConsistencyManager()
        let screen = ScreenModel([person(1, "A"), person(2, "B")])
        manager.register(screen)
        await Task.detached {
            manager.push(person(2, "B2"), version: 2)
            manager.push(person(2, "B1"), version: 1)
            manager.push(person(2, "B3"), version: 3)
        }.value
        await manager.waitForUpdates()
        #expect(screen.consistentValue.map(\.name) == ["A", "B3"], "merged on the main actor, newest version last")
        #expect(screen.writesOnMainActor >= 1)
    }

    @Test func anActorHolderIsUpdatedOnItsActor() async {
        let manager = ConsistencyManager()
        let holder = PersonActor(person(1, "A"))
        await manager.register(holder)
        manager.push(person(1, "B"))
        await manager.waitForUpdates()
        #expect(await holder.consistentValue?.name == "B")
    }

    @Test func consistencyConcurrentPushRegisterAndReleaseAreSafe() {
        let manager = ConsistencyManager()
        let shared = Holder((1...8).map { person($0, "v0") })
        manager.register(shared)
        let threads = 4, rounds = 200
        runConcurrently(threads: threads) { thread in
            for round in 1...rounds {
                switch round % 4 {
                case 0:
                    // A short-lived holder: registered, then released at once.
                    let temporary = Holder([person(Int64(round % 8 + 1), "t")])
                    manager.register(temporary)
                case 1:
                    _ = manager.pull([person(Int64(thread + 1), "stale")])
                case 2:
                    _ = manager.holderCount
                default:
                    manager.push(person(Int64(round / 4 % 8 + 1), "v\(round)"), version: UInt64(round * threads + thread))
                }
            }
        }
        let names = shared.value.map(\.name)
        #expect(names.count == 8)
        for (index, name) in names.enumerated() {
            #expect(manager.pull([person(Int64(index + 1), "x")]).first?.name == name, "the holder has the newest version pushed")
        }
        #expect(manager.holderCount == 1)
    }

    @Test func consistencyFollowedCommitsRacingWithPushesAndRegistrationsEndEqualToTheTable() throws {
        let store = try tableStore(checkingInvariants: false)
        let people = try store.table(Person.self, named: "people")
        let ids = Array(Int64(1)...6)
        try people.put(ids.map { person($0, "v0") })
        store.consistency.follow(people)
        let holder = Holder(people.all())
        store.consistency.register(holder)
        runConcurrently(threads: 4) { thread in
            for round in 0..<100 {
                let id = ids[(round + thread) % ids.count]
                switch thread {
                case 0, 1:
                    // A commit's version is its LSN: newer than every unversioned push before it.
                    try? people.put(person(id, "commit \(thread).\(round)"))
                case 2:
                    store.consistency.register(Holder([person(id, "temporary")]))
                    store.consistency.push(person(id, "pushed \(round)"))
                default:
                    _ = store.consistency.pull(holder.value)
                    _ = store.consistency.holderCount
                }
            }
        }
        // One more commit of each: the last word is the store's.
        try people.put(ids.map { person($0, "final") })
        #expect(holder.value == people.all())
    }
}

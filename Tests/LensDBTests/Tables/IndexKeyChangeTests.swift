import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// What `Reading.band` adds to a reading's level: the state outside the
/// entity that its indexed key reads.
private let bandShift = Locked(0)

/// A reading indexed by a computed property that reads state outside the
/// entity, as one reading the clock does: its key changes while the
/// entity does not.
private struct Reading: Entity, Equatable {
    var id: Int64
    var level: Int
    var note = ""
    var band: Int { level + bandShift.withLock { $0 } }
}

/// An index entry does not keep its row alive: the row tree does. A change
/// finds the entry of the row it replaces by that row's key, read again,
/// so a key that changed since the entry was made misses it, and the entry
/// would go on pointing at a row no version holds. A miss builds the index
/// again from the rows, so every entry points at a row its version holds,
/// which the invariant checks after every commit confirm (an entry count
/// that is not the row count fails them first, before any entry is read).
@Suite struct IndexKeyChangeTests {
    @Test func aChangeThatMissesAnEntryBecauseItsKeyMovedBuildsTheIndexAgain() throws {
        let store = try tableStore()
        let readings = try store.table(Reading.self, named: "readings", indexes: [.on(\.band), .on(\.level, \.band)])
        // Enough rows that a batch of three changes its indexes one change
        // at a time (a rebuild, from one change per 16 entries, matches by row).
        try readings.put((1...100).map { Reading(id: $0, level: Int($0 % 10)) })

        bandShift.withLock { $0 = 1000 }
        try readings.remove(1)
        #expect(readings.count == 99)
        #expect(try readings.query.filter(\.band == 1002).all().map(\.id) == [2, 12, 22, 32, 42, 52, 62, 72, 82, 92])

        // The same key before and after, read now: a put that would point
        // the entry at the new row in place finds none there.
        bandShift.withLock { $0 = 2000 }
        try readings.put(Reading(id: 2, level: 2, note: "checked"))
        #expect(try readings.query.filter(\.band == 2002).all().map(\.id) == [2, 12, 22, 32, 42, 52, 62, 72, 82, 92])

        bandShift.withLock { $0 = 3000 }
        try readings.put([Reading(id: 3, level: 4), Reading(id: 4, level: 4, note: "checked"), Reading(id: 101, level: 4)])
        #expect(try readings.query.filter(\.band == 3004).all().map(\.id) == [3, 4, 14, 24, 34, 44, 54, 64, 74, 84, 94, 101])
        #expect(try readings.query.filter(\.level == 4 && \.band == 3004).count() == 12)

        // A put or remove whose key did not move finds its entry as before.
        try readings.remove(4)
        try readings.put(Reading(id: 5, level: 6, note: "moved"))
        #expect(try readings.query.filter(\.band == 3006).all().map(\.id).first == 5)
        try store.checkInvariants()
        store.close()
    }
}

import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// References between entities, graphs that follow them, and merging a
/// server's result.
@Suite struct RelationshipTests {
    struct Employee: Entity, Equatable {
        var id: Int64
        var name: String
        var manager: Ref<Employee>?
        var team: Ref<Team>?
        var tags: [Ref<Tag>] = []
    }
    struct Team: Entity, Equatable { var id: String; var lead: Ref<Employee>? }
    struct Tag: Entity, Equatable { var id: UUID; var label: String }

    struct Company {
        let store: Store
        let employees: Table<Employee>
        let teams: Table<Team>
        let tags: Table<Tag>
    }

    func company() throws -> Company {
        let store = try tableStore()
        let company = Company(store: store,
                              employees: try store.table(Employee.self, named: "employees", indexes: [.on(\.manager)]),
                              teams: try store.table(Team.self, named: "teams"), tags: try store.table(Tag.self, named: "tags"))
        // 1 ← 2 ← 3 ← 4 (each managed by the one before), 1 managed by 4: a cycle.
        try company.employees.put([
            Employee(id: 1, name: "Ada", manager: Ref(4), team: Ref("core")),
            Employee(id: 2, name: "Bo", manager: Ref(1), team: Ref("core")),
            Employee(id: 3, name: "Cy", manager: Ref(2), team: Ref("gone")),
            Employee(id: 4, name: "Di", manager: Ref(3)),
        ])
        try company.teams.put(Team(id: "core", lead: Ref(1)))
        return company
    }

    @Test func aReferenceIsStoredAsTheBareIdAndAnIndexOnItServesReverseLookups() throws {
        let company = try company()
        #expect(try ValueEncoder().encode(Ref<Employee>(7)) == ValueEncoder().encode(Int64(7)))
        let reports = company.employees.query.filter(\.manager == Ref(2))
        #expect(try reports.all().map(\.name) == ["Cy"])
        #expect(reports.explain().contains("use index employees.manager"))
    }

    @Test func graphsFollowReferencesEachEntityOnceAndListDanglingOnes() throws {
        let company = try company()
        let graph = try company.employees.query.filter(\.id == 3).including(\.manager) { $0.including(\.team) }.graph()
        #expect(graph.roots.map(\.name) == ["Cy"])
        #expect(graph[Ref<Employee>(2)]?.name == "Bo")
        #expect(graph.entity(Team.self, id: "core") != nil, "Bo's team, through the nested inclusion")
        #expect(graph.entities(Employee.self).map(\.id) == [2, 3], "one level: Cy and her manager")
        let withTeams = try company.employees.query.including(\.team).graph()
        #expect(withTeams.missing.map(\.id) == ["\"gone\""], "a dangling reference is listed, not an error")
        #expect(withTeams.entities(Team.self).count == 1)
    }

    @Test func recursiveGraphsEndOnCyclesAndStopAtTheirDepth() throws {
        let company = try company()
        let query = company.employees.query.filter(\.id == 4)
        #expect(try query.including(\.manager).recursive(depth: 2).graph().entities(Employee.self).map(\.id) == [2, 3, 4])
        let whole = try query.including(\.manager).recursive(depth: .unlimited).graph()
        #expect(whole.entities(Employee.self).map(\.id) == [1, 2, 3, 4], "the cycle back to Di ends the walk")
        #expect(whole.count == 4, "each entity exactly once")
        let across = try company.teams.query.including(\.lead) { $0.including(\.manager).recursive(depth: .unlimited) }.graph()
        #expect(across.entities(Employee.self).count == 4)
    }

    @Test func toManyReferencesAndLiveGraphsFollowRelatedChanges() async throws {
        let company = try company()
        let tag = Tag(id: UUID(), label: "remote")
        try company.tags.put(tag)
        try company.employees.put(Employee(id: 5, name: "Ed", tags: [Ref(tag), Ref(UUID())]))
        let query = company.employees.query.filter(\.id == 5).including(\.tags)
        let graph = try query.graph()
        #expect(graph.entities(Tag.self) == [tag] && graph.missing.count == 1)
        var live = query.values.makeAsyncIterator()
        #expect(await live.next()?.map(\.id) == [5])
        try company.tags.put(Tag(id: tag.id, label: "on site"))
        #expect(await live.next()?.map(\.id) == [5], "a change to a related entity emits")
    }

    @Test(arguments: [MergeStrategy.retainExtraLocalData, .discardExtraLocalData])
    func mergeIsOneTransactionWithOneEmission(strategy: MergeStrategy) async throws {
        let company = try company()
        let managedByAda = company.employees.query.filter(\.manager == Ref(1))
        var live = managedByAda.values.makeAsyncIterator()
        #expect(await live.next()?.map(\.id) == [2])
        let before = company.store.current.lsn
        let remote = [Employee(id: 2, name: "Bo", manager: Ref(1), team: Ref("core")), Employee(id: 6, name: "Fay", manager: Ref(1))]
        let merged = try company.employees.merge(remote, matching: managedByAda, strategy: strategy)
        #expect(merged.put == 1, "Bo was unchanged")
        #expect(company.store.current.lsn == before + 1, "one transaction")
        #expect(await live.next()?.map(\.id) == [2, 6])
        try company.employees.put(Employee(id: 7, name: "Gus", manager: Ref(1)))
        #expect(await live.next()?.map(\.id) == [2, 6, 7])
        let second = try company.employees.merge(remote, matching: managedByAda, strategy: strategy)
        #expect(second.removed == (strategy == .discardExtraLocalData ? 1 : 0))
        #expect(company.employees[7] == nil ? strategy == .discardExtraLocalData : strategy == .retainExtraLocalData)
        if strategy == .discardExtraLocalData { #expect(await live.next()?.map(\.id) == [2, 6]) }
        #expect(company.employees[3] != nil, "entities the query does not select are never removed")
    }
}

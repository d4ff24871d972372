/// A query's results with the entities their relationships reach: the
/// roots in the query's order, and every related entity by type and
/// identifier, each exactly once, all from one committed version.
///
/// A reference to an entity that does not exist (a dangling reference) is
/// listed in ``missing``; it never fails the query.
public struct EntityGraph<Root: Entity>: Sendable {
    /// The query's results, in its order.
    public let roots: [Root]
    /// References followed to no entity.
    public let missing: [MissingReference]
    let rows: [ObjectIdentifier: [IndexValue: RowObject]]

    /// The entity `id` of type `E`, if the graph holds it.
    public func entity<E: Entity>(_ type: E.Type, id: E.ID) -> E? {
        guard let key = try? identifierValue(id), let row = rows[ObjectIdentifier(E.self)]?[key] else { return nil }
        return Table<E>.entity(row)
    }

    /// The entity `reference` points at, if the graph holds it.
    public subscript<E: Entity>(reference: Ref<E>) -> E? { entity(E.self, id: reference.id) }

    /// Every entity of type `E` in the graph, roots included, in identifier order.
    public func entities<E: Entity>(_ type: E.Type) -> [E] {
        (rows[ObjectIdentifier(E.self)] ?? [:]).sorted { $0.key < $1.key }.map { Table<E>.entity($0.value) }
    }

    /// How many entities the graph holds, roots included.
    public var count: Int { rows.values.reduce(0) { $0 + $1.count } }
}

/// A reference that pointed at no entity.
public struct MissingReference: Sendable, Hashable, CustomStringConvertible {
    /// The relationship followed (a key path).
    public let relationship: String
    /// The referenced type and identifier.
    public let type: String
    public let id: String

    public var description: String { "\(relationship) → \(type) \(id)" }
}

/// Builds a graph by following steps from sets of rows, breadth first.
struct GraphBuilder {
    let state: StoreState
    let store: Store
    var rows: [ObjectIdentifier: [IndexValue: RowObject]] = [:]
    var missing: [MissingReference] = []

    /// Adds `row` unless the graph has it; true when added.
    mutating func add(_ type: ObjectIdentifier, _ id: IndexValue, _ row: RowObject) -> Bool {
        guard rows[type]?[id] == nil else { return false }
        rows[type, default: [:]][id] = row
        return true
    }

    mutating func follow(_ step: GraphStep, from sources: [RowObject]) {
        var current = sources
        var remaining = step.depth
        while !current.isEmpty {
            let table = step.table ?? store.tableName(forEntity: step.targetType)
            let storage = table.flatMap { state.typed[$0] }.flatMap { $0.schema.entityType == step.targetType ? $0 : nil }
            var found: [RowObject] = []
            for source in current {
                for id in step.references(source) where rows[step.targetType]?[id] == nil {
                    guard let row = storage?.row(id) else {
                        let reference = MissingReference(relationship: step.label, type: step.targetTypeName, id: "\(id)")
                        if !missing.contains(reference) { missing.append(reference) }
                        continue
                    }
                    if add(step.targetType, id, row) { found.append(row) }
                }
            }
            for nested in step.nested { follow(nested, from: found) }
            // The references closure reads the source type: only a step
            // from a type to itself can start again from what it found.
            guard step.sourceType == step.targetType else { break }
            if let count = remaining {
                remaining = count - 1
                if count <= 1 { break }
            }
            current = found
        }
    }
}

extension Query {
    /// The results and every entity their relationships reach (see
    /// `including(_:from:_:)`), from one version.
    /// - Complexity: the query's, plus O(log n) per reference followed.
    public func graph() throws -> EntityGraph<T> {
        try buildGraph().graph
    }

    /// The graph and the rows it holds (for live graphs' signatures).
    func buildGraph() throws -> (graph: EntityGraph<T>, candidates: [Candidate], builder: GraphBuilder) {
        let state = version()
        var query = self
        query.source = .state(state)
        let candidates = try query.execution().runCandidates()
        var builder = GraphBuilder(state: state, store: table.store)
        for candidate in candidates { _ = builder.add(ObjectIdentifier(T.self), candidate.id, candidate.row) }
        for step in inclusions.steps { builder.follow(step, from: candidates.map(\.row)) }
        let graph = EntityGraph(roots: candidates.map { Table<T>.entity($0.row) }, missing: builder.missing, rows: builder.rows)
        return (graph, candidates, builder)
    }

    /// The tables the relationships reach.
    var relatedTables: Set<String> {
        func tables(_ steps: [GraphStep]) -> Set<String> {
            steps.reduce(into: Set<String>()) { result, step in
                if let name = step.table ?? table.store.tableName(forEntity: step.targetType) { result.insert(name) }
                result.formUnion(tables(step.nested))
            }
        }
        return tables(inclusions.steps)
    }

    /// ``graph()``, live: the graph now, then again after each commit that
    /// changes its roots or any entity it reaches (see ``values``).
    public var graphValues: AsyncStream<EntityGraph<T>> {
        observe(relatedTables: relatedTables) { query in
            let (graph, _, builder) = try query.buildGraph()
            return (graph, ResultSignature(graph: builder.rows, roots: graph.roots.count, missing: graph.missing.count))
        }
    }
}

extension ResultSignature {
    /// Every row of a graph, by type and identifier, with its LSN.
    init(graph rows: [ObjectIdentifier: [IndexValue: RowObject]], roots: Int, missing: Int) {
        self.init(count: roots)
        for (type, byID) in rows.sorted(by: { $0.key.hashValue < $1.key.hashValue }) {
            for (id, row) in byID.sorted(by: { $0.key < $1.key }) {
                ids.append(.int(Int64(type.hashValue)))
                ids.append(id)
                lsns.append(row.lsn)
            }
        }
        lsns.append(UInt64(missing))
    }
}

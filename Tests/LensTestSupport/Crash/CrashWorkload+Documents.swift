import LensDB

extension CrashWorkload {
    /// The root document the workloads patch.
    static let documentRoot = "tree"

    /// A change to the root document ``documentRoot`` as lenses make them:
    /// mostly patches of one member (operation 7) at a path that exists in
    /// `shadow`, the state every transaction before this one leaves;
    /// sometimes the whole document set or removed.
    static func documentOperation(_ random: inout SeededGenerator, _ shadow: ReferenceModel) -> ModelOperation {
        let name = documentRoot
        guard let bytes = shadow.roots[name], let document = try? Document(decodingBinary: bytes) else {
            // No document yet (or one the workload never writes): start one.
            return .setRoot(name: name, value: randomObject(&random, depth: 2).binaryEncoded(), encoding: .valueFormat)
        }
        switch Int.random(in: 0..<20, using: &random) {
        case 0: return .removeRoot(name: name)
        case 1: return .setRoot(name: name, value: randomObject(&random, depth: 2).binaryEncoded(), encoding: .valueFormat)
        default:
            let parents = objectPaths(in: document, at: [])
            let parent = parents[Int.random(in: 0..<parents.count, using: &random)]
            let existing = document.member(at: parent).flatMap { member -> [String]? in
                if case let .object(entries) = member { return entries.keys.sorted() }
                return nil
            } ?? []
            if !existing.isEmpty && Int.random(in: 0..<4, using: &random) == 0 {
                return .patchRoot(name: name, path: parent + [existing[Int.random(in: 0..<existing.count, using: &random)]], value: nil)
            }
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            return .patchRoot(name: name, path: parent + [key], value: randomMember(&random).binaryEncoded())
        }
    }

    private static let keys = ["a", "b", "c", "dé", "e.f"]

    /// The paths of every object in `document`, this one first.
    private static func objectPaths(in document: Document, at path: [String]) -> [[String]] {
        guard case let .object(entries) = document else { return [] }
        return [path] + entries.keys.sorted().flatMap { objectPaths(in: entries[$0]!, at: path + [$0]) }
    }

    private static func randomObject(_ random: inout SeededGenerator, depth: Int) -> Document {
        var entries: [String: Document] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            entries[key] = depth > 0 && Bool.random(using: &random) ? randomObject(&random, depth: depth - 1) : randomMember(&random)
        }
        return .object(entries)
    }

    /// A scalar, a string whose size crosses the compression threshold and
    /// sector boundaries, or a small object.
    private static func randomMember(_ random: inout SeededGenerator) -> Document {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .int(Int64.random(in: -1000...1000, using: &random))
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .null
        case 3: return .string(String(repeating: "y", count: [1, 50, 300, 900][Int.random(in: 0..<4, using: &random)]))
        default: return randomObject(&random, depth: 1)
        }
    }
}

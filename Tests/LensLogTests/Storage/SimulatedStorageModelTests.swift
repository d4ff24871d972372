import LensTestSupport
import Testing
@testable import LensLog

/// The simulator's promises restated as plainly as possible: names map to
/// file ids, each file has current and durable bytes, and a crash under
/// `.dropAll` or `.keepAll` is fully predictable.
private struct ReferenceModel {
    var current: [String: Int] = [:]
    var durable: [String: Int] = [:]
    var files: [Int: (current: [UInt8], durable: [UInt8])] = [:]
    var nextID = 0

    mutating func create(_ name: String) {
        guard current[name] == nil else { return }
        nextID += 1
        current[name] = nextID
        files[nextID] = ([], [])
    }

    mutating func write(_ bytes: [UInt8], at offset: Int, to name: String) {
        var content = files[current[name]!]!.current
        if offset + bytes.count > content.count { content += [UInt8](repeating: 0, count: offset + bytes.count - content.count) }
        content.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        files[current[name]!]!.current = content
    }

    mutating func truncate(_ name: String, to length: Int) {
        var content = files[current[name]!]!.current
        if length < content.count { content.removeLast(content.count - length) } else { content += [UInt8](repeating: 0, count: length - content.count) }
        files[current[name]!]!.current = content
    }

    mutating func crash(keepingAll: Bool) {
        current = durable
        let live = Set(durable.values)
        files = files.filter { live.contains($0.key) }.mapValues { file in
            keepingAll ? (file.current, file.current) : (file.durable, file.durable)
        }
    }
}

@Suite struct SimulatedStorageModelTests {
    @Test func randomOperationsMatchTheReferenceModel() throws {
        var random = SeededGenerator.fromEnvironment(default: 20_261_122)
        for _ in 0..<20 {
            let fileSystem = try makeSimulatedStore()
            var model = ReferenceModel()
            for step in 0..<200 {
                try apply(step: step, fileSystem, &model, &random)
                try check(fileSystem, model, step: step)
            }
        }
    }

    private func apply(step: Int, _ fileSystem: SimulatedFileSystem, _ model: inout ReferenceModel, _ random: inout SeededGenerator) throws {
        let name = ["a", "b", "c"].randomElement(using: &random)!
        let path = "s/" + name
        let exists = model.current[name] != nil
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1:
            try fileSystem.openFile(at: path, mode: .create).close()
            model.create(name)
        case 2...3 where exists:
            let bytes = random.bytes(Int.random(in: 0...700, using: &random))
            let offset = Int.random(in: 0...1500, using: &random)
            try withFile(path, fileSystem) { try $0.write(bytes, at: Int64(offset)) }
            model.write(bytes, at: offset, to: name)
        case 4 where exists:
            let length = Int.random(in: 0...1500, using: &random)
            try withFile(path, fileSystem) { try $0.truncate(to: Int64(length)) }
            model.truncate(name, to: length)
        case 5 where exists:
            try withFile(path, fileSystem) { try $0.sync(Bool.random(using: &random) ? .durable : .durableWithMetadata) }
            model.files[model.current[name]!]!.durable = model.files[model.current[name]!]!.current
        case 6 where exists:
            let target = ["a", "b", "c"].randomElement(using: &random)!
            try fileSystem.rename(path, to: "s/" + target)
            let id = model.current.removeValue(forKey: name)
            model.current[target] = id
        case 7 where exists:
            try fileSystem.removeFile(at: path)
            model.current[name] = nil
        case 8:
            try fileSystem.syncDirectory(at: "s")
            model.durable = model.current
        case 9:
            let keepingAll = Bool.random(using: &random)
            fileSystem.crash(using: &random, model: keepingAll ? .keepAll : .dropAll)
            model.crash(keepingAll: keepingAll)
        default:
            break
        }
    }

    private func withFile(_ path: String, _ fileSystem: SimulatedFileSystem, _ body: (any StoredFile) throws -> Void) throws {
        let file = try fileSystem.openFile(at: path, mode: .readWrite)
        defer { file.close() }
        try body(file)
    }

    private func check(_ fileSystem: SimulatedFileSystem, _ model: ReferenceModel, step: Int) throws {
        #expect(try fileSystem.listDirectory("s") == model.current.keys.sorted(), "listing after step \(step)")
        for name in ["a", "b", "c"] {
            #expect(fileSystem.contents(of: "s/" + name) == model.current[name].map { model.files[$0]!.current },
                    "current bytes of \(name) after step \(step)")
            #expect(fileSystem.durableContents(of: "s/" + name) == model.durable[name].map { model.files[$0]!.durable },
                    "durable bytes of \(name) after step \(step)")
        }
    }
}

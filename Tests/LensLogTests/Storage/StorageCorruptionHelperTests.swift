import LensTestSupport
import Testing
@testable import LensLog

@Suite struct StorageCorruptionHelperTests {
    @Test func arrayHelpersFlipZeroOverwriteAndCut() {
        var bytes: [UInt8] = [1, 2, 3, 4, 5]
        flip(byteAt: 1, in: &bytes, mask: 0x01)
        #expect(bytes == [1, 3, 3, 4, 5])
        zero(range: 3..<7, in: &bytes)
        #expect(bytes == [1, 3, 3, 0, 0, 0, 0])
        overwrite(at: 0, with: [9, 9], in: &bytes)
        shrink(&bytes, by: 3)
        #expect(bytes == [9, 9, 3, 0])
        truncate(&bytes, to: 1)
        #expect(bytes == [9])
    }

    @Test func fileHelpersPlantDamageThatSurvivesCrash() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1, 2, 3, 4], to: "s/a", in: fileSystem)
        fileSystem.flip(byteAt: 0, inFile: "s/a")
        fileSystem.zero(range: 2..<3, inFile: "s/a")
        fileSystem.truncate(file: "s/a", to: 3)
        fileSystem.crash(seed: 1, model: .dropAll)
        #expect(fileSystem.contents(of: "s/a") == [0xFE, 2, 0])
    }

    @Test func plantedFileAndItsDirectoriesAreDurable() {
        let fileSystem = SimulatedFileSystem()
        fileSystem.setContents([7], of: "x/y/z")
        fileSystem.crash(seed: 2, model: .dropAll)
        #expect(fileSystem.contents(of: "x/y/z") == [7])
    }

    @Test func seededGeneratorReplaysItsSequence() {
        var first = SeededGenerator(seed: 5)
        var second = SeededGenerator(seed: 5)
        #expect(first.bytes(32) == second.bytes(32))
    }
}

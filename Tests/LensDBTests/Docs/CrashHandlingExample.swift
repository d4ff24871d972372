// The example of the "Durability and recovery" article, which quotes the
// lines between the markers verbatim (ArticleExampleTests checks that it
// does): how an app tests its own crash handling on LensDB's simulated disk.
import LensDB
import LensLog
import Testing

@Suite struct CrashHandlingExample {
    // article:begin DurabilityAndRecovery.md
    struct Draft: Codable, Equatable {
        var text: String
    }

    /// The app's rule: a draft saved with `.full` survives any power cut,
    /// and whatever else the cut leaves, the app starts.
    @Test(arguments: 0..<50 as Range<UInt64>)
    func savedDraftSurvivesAPowerCut(seed: UInt64) throws {
        let disk = SimulatedFileSystem()
        var options = StoreOptions(durability: .full)
        options.fileSystem = disk
        let encoder = ValueEncoder(), decoder = ValueDecoder()

        let store = try Store(at: "/app/drafts.lensdb", options: options)
        try store.write { tx in
            tx.put(try encoder.encode(Draft(text: "Dear Ada")), for: try encoder.encode("saved"), in: "drafts")
        }
        try store.write(durability: .buffered) { tx in
            tx.put(try encoder.encode(Draft(text: "unsynced")), for: try encoder.encode("typing"), in: "drafts")
        }

        // Cut the power: each write not yet synced is kept, lost, torn at a
        // 512-byte sector, or garbled, as the seed decides.
        disk.crash(seed: seed)

        let reopened = try Store(at: "/app/drafts.lensdb", options: options)
        let saved = try #require(reopened.current.value(in: "drafts", key: try encoder.encode("saved")))
        #expect(try decoder.decode(Draft.self, from: saved.bytes()) == Draft(text: "Dear Ada"))
        // The buffered draft may or may not be there, but never half of it.
        if let typing = reopened.current.value(in: "drafts", key: try encoder.encode("typing")) {
            #expect(try decoder.decode(Draft.self, from: typing.bytes()) == Draft(text: "unsynced"))
        }
    }

    /// The app's rule: a full disk is reported, and what was saved stays readable.
    @Test func fullDiskFailsTheSaveAndKeepsWhatWasSaved() throws {
        let disk = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = disk
        let encoder = ValueEncoder()
        let store = try Store(at: "/app/drafts.lensdb", options: options)
        try store.write { tx in tx.put(try encoder.encode(Draft(text: "kept")), for: try encoder.encode("a"), in: "drafts") }

        // The next write to a log fails with ENOSPC.
        disk.injectFault(Fault(.noSpace, operations: [.write], pathSuffix: ".log"))
        #expect(throws: StoreError.self) {
            try store.write { tx in tx.put(try encoder.encode(Draft(text: "lost")), for: try encoder.encode("b"), in: "drafts") }
        }
        #expect(store.failure != nil)  // read-only until reopened
        #expect(store.current.count(in: "drafts") == 1)
    }
    // article:end
}

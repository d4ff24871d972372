import ArgumentParser

@main
struct CrashFuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "CrashFuzz",
        abstract: "Crash-recovery fuzzer for LensDB: simulated power loss at every I/O boundary.")
}

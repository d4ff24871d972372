import ArgumentParser

@main
struct LogTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logtool",
        abstract: "Inspect, verify, repair and compact LensDB stores.")
}

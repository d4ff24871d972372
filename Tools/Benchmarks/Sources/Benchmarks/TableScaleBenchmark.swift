import Foundation
import GRDB
import LensDB

/// W4, W5 and W6 per entity at 10k, 100k and 1M people, and LensDB's
/// resident memory per entity (indexes included) against its encoded size.
let tableScaleWorkload = Workload(
    name: "table-scale",
    summary: "W4/W5/W6 per entity and resident memory per entity at 10k, 100k and 1M people"
) {
    var rows: [[String]] = []
    for count in [10_000, 100_000, 1_000_000] {
        let lensPath = BenchPath("scale-lens"), grdbPath = BenchPath("scale-grdb")
        defer { lensPath.remove(); grdbPath.remove() }
        let (store, people) = try openLensPeople(lensPath.path)
        let pool = try openGRDBPeople(grdbPath.path, create: true)
        try fillBoth(lens: people, store: store, grdb: pool, count: count)
        var random = SystemRandomNumberGenerator()
        let ids = (0..<100_000).map { _ in Int64.random(in: 1...Int64(count), using: &random) }
        let reads = try interleave(pointReadContenders(people, pool, ids), rounds: 4, window: 0.3)
        let queries = try interleave(queryContenders(people, pool), rounds: 4, window: 0.3)
        try store.compact()
        store.close()
        _ = try pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        try pool.close()
        let (lensOpen, grdbOpen) = try openTimes(lensPath.path, grdbPath.path, count: count, repetitions: 3)
        let (memory, estimate) = try residentBytesPerEntity(lensPath.path, count: count)
        let encoded = Double(try ValueEncoder().encode(BenchPerson.make(Int64(count / 2))).count)
        rows.append(["\(count)", format(reads.rate(0)), String(format: "%.1f×", reads.rate(0) / reads.rate(1)),
                     format(queries.rate(0)), String(format: "%.1f×", queries.rate(0) / queries.rate(1)),
                     String(format: "%.2f", median(lensOpen) / Double(count) * 1e6), String(format: "%.2f×", median(grdbOpen) / median(lensOpen)),
                     String(format: "%.0f", memory), String(format: "%.0f", estimate), String(format: "%.0f", encoded),
                     String(format: "%.1f×", memory / encoded)])
    }
    printTable(["people", "W4 reads/s", "vs GRDB", "W5 queries/s", "vs GRDB", "W6 µs/entity", "vs GRDB",
                "RSS bytes/entity", "statistics bytes/entity", "encoded bytes/entity", "RSS / encoded"], rows)
}

/// Opens the store and its table in a child process and returns the growth
/// of its resident memory per entity, what the table costs in memory, and
/// the table's `residentBytes` in `store.statistics` per entity.
func residentBytesPerEntity(_ path: String, count: Int) throws -> (measured: Double, reported: Double) {
    let numbers = try childNumbers(["memory-probe", path])
    guard numbers.count == 2 else { return (.nan, .nan) }
    return (numbers[0] / Double(count), numbers[1] / Double(count))
}

/// The numbers this benchmark prints when run again with `arguments`, in
/// a child process of its own (whose memory then counts alone).
func childNumbers(_ arguments: [String]) throws -> [Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
}

/// The child's side: resident bytes added by opening the table.
func memoryProbe(_ path: String) throws {
    trimMalloc()
    let before = residentBytes()
    let (store, people) = try openLensPeople(path)
    precondition(people.count > 0)
    // What open freed (the bytes the table replaced by entities, which a
    // utility thread frees just after the open returns) goes back to the
    // system, so what remains is what the table holds.
    usleep(500_000)
    trimMalloc()
    print(residentBytes() - before, store.statistics.tables.first { $0.name == "people" }?.residentBytes ?? 0)
    store.close()
}

/// This process's resident set, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// glibc's `malloc_trim(0)`, looked up at run time: Swift's Glibc module
/// does not export it.
func trimMalloc() {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
}

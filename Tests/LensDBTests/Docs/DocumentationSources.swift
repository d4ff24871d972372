import Foundation

/// What the documentation tests read: the articles' code blocks, and the
/// regions of compiled files that those blocks quote.
///
/// A region is the lines between two markers; the first names the article
/// (or the README) that quotes it, or several, separated by spaces:
///
///     // article:begin TablesAndQueries.md
///     let people = try store.table(Person.self, named: "people")
///     // article:end
///
/// Regions are found, not listed: every `.swift` file under
/// `Tests/LensDBTests/Docs` (compiled and run by this test target) and every
/// `Package.swift` under `Tests/Fixtures/packages` (manifests a user pastes
/// from, evaluated by `ManifestExampleTests`). A file may hold several
/// regions, for one article or for several.
enum DocumentationSources {
    /// The repository's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The documents whose code blocks are checked: the DocC articles and the README.
    static let catalog = "Sources/LensDB/LensDB.docc"
    static let readme = "README.md"

    /// Where regions are looked for, and which files there.
    static let regionSources: [(directory: String, fileName: @Sendable (String) -> Bool)] = [
        ("Tests/LensDBTests/Docs", { $0.hasSuffix(".swift") }),
        ("Tests/Fixtures/packages", { $0 == "Package.swift" }),
    ]

    /// The languages a code block may be tagged with. Only `swift` blocks are
    /// compiled; a Swift sample tagged otherwise would escape the check, so
    /// an untagged block, or a tag outside this list, fails.
    static let languages: Set<String> = ["swift", "sh", "text", "json"]

    static let beginMarker = "// article:begin"
    static let endMarker = "// article:end"

    struct CodeBlock {
        var document: String
        /// The line of the opening fence, from 1.
        var line: Int
        var language: String
        var text: String
    }

    struct Region {
        /// The file's path from the repository's root.
        var file: String
        /// The line of the `article:begin` marker, from 1.
        var line: Int
        /// The file names of the documents that quote it.
        var documents: [String]
        var text: String
    }

    /// Every document: its file name (`GettingStarted.md`, `README.md`) and text.
    static func documents() throws -> [(name: String, text: String)] {
        let directory = root.appendingPathComponent(catalog)
        let articles = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".md") }.sorted()
        return try (articles.map { (directory.appendingPathComponent($0), $0) } + [(root.appendingPathComponent(readme), readme)])
            .map { url, name in (name, try String(contentsOf: url, encoding: .utf8)) }
    }

    /// The fenced code blocks of a Markdown document, with the indentation of
    /// their fence removed from their lines.
    static func codeBlocks(in text: String, document: String) -> [CodeBlock] {
        var blocks: [CodeBlock] = []
        var open: (line: Int, indent: Int, language: String, lines: [String])?
        for (number, line) in text.components(separatedBy: "\n").enumerated() {
            let indent = line.prefix { $0 == " " }.count
            let trimmed = line.dropFirst(indent)
            if var block = open {
                if trimmed == "```" {
                    blocks.append(CodeBlock(document: document, line: block.line, language: block.language,
                                            text: block.lines.joined(separator: "\n")))
                    open = nil
                } else {
                    block.lines.append(String(line.dropFirst(min(indent, block.indent))))
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = (number + 1, indent, String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), [])
            }
        }
        return blocks
    }

    /// Every marked region, and what is wrong with the markers.
    static func regions() throws -> (regions: [Region], problems: [String]) {
        var regions: [Region] = [], problems: [String] = []
        for (directory, wanted) in regionSources {
            let base = root.appendingPathComponent(directory)
            guard let walker = FileManager.default.enumerator(atPath: base.path) else {
                problems.append("\(directory) cannot be read")
                continue
            }
            for case let relative as String in walker where wanted((relative as NSString).lastPathComponent) {
                let file = "\(directory)/\(relative)"
                let source = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                let found = markedRegions(in: source, file: file)
                regions += found.regions
                problems += found.problems
            }
        }
        return (regions.sorted { ($0.file, $0.line) < ($1.file, $1.line) }, problems)
    }

    /// The regions of one file, each without its lines' common indentation.
    static func markedRegions(in source: String, file: String) -> (regions: [Region], problems: [String]) {
        var regions: [Region] = [], problems: [String] = []
        var open: (line: Int, documents: [String], lines: [String])?
        for (number, line) in source.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(beginMarker) {
                let documents = trimmed.dropFirst(beginMarker.count).split(separator: " ").map(String.init)
                if let open { problems.append("\(file):\(number + 1): a region begins inside the one begun at line \(open.line)") }
                if documents.isEmpty {
                    problems.append("\(file):\(number + 1): `\(beginMarker)` must name the document that quotes the region, as in `\(beginMarker) GettingStarted.md`")
                }
                open = (number + 1, documents, [])
            } else if trimmed.hasPrefix(endMarker) {
                guard let region = open else {
                    problems.append("\(file):\(number + 1): `\(endMarker)` ends no region")
                    continue
                }
                regions.append(Region(file: file, line: region.line, documents: region.documents, text: dedented(region.lines)))
                open = nil
            } else {
                open?.lines.append(line)
            }
        }
        if let open { problems.append("\(file):\(open.line): the region begun here has no `\(endMarker)`") }
        return (regions, problems)
    }

    /// The lines without the indentation they all share, joined.
    static func dedented(_ lines: [String]) -> String {
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }.joined(separator: "\n")
    }
}

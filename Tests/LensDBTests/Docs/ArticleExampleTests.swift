import Foundation
import Testing

/// The articles' examples are code that these tests compile and run: each
/// article quotes, as one `swift` code block, the lines between
/// `// article:begin` and `// article:end` of its example file.
@Suite struct ArticleExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: [
        ("GettingStarted.md", "GettingStartedExample.swift"),
        ("DurabilityAndRecovery.md", "CrashHandlingExample.swift"),
        ("RootLens.md", "RootLensExample.swift"),
        ("Consistency.md", "ConsistencyExample.swift"),
    ])
    func articleQuotesItsTestedExample(article: String, example: String) throws {
        let source = try String(contentsOf: Self.root.appendingPathComponent("Tests/LensDBTests/Docs/\(example)"), encoding: .utf8)
        let text = try String(contentsOf: Self.root.appendingPathComponent("Sources/LensDB/LensDB.docc/\(article)"), encoding: .utf8)
        let quoted = try #require(Self.marked(source), "\(example) has no article:begin / article:end")
        #expect(Self.codeBlocks(text).contains(quoted), "\(article) does not quote \(example) as it is now:\n\(quoted)")
    }

    /// The lines between the markers, without their common indentation.
    static func marked(_ source: String) -> String? {
        let lines = source.components(separatedBy: "\n")
        guard let begin = lines.firstIndex(where: { $0.hasSuffix("// article:begin") }),
              let end = lines.firstIndex(where: { $0.hasSuffix("// article:end") }), begin < end else { return nil }
        let body = lines[(begin + 1)..<end]
        let indent = body.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return body.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }.joined(separator: "\n")
    }

    /// The contents of the article's ```swift blocks.
    static func codeBlocks(_ article: String) -> [String] {
        var blocks: [String] = [], current: [String]?
        for line in article.components(separatedBy: "\n") {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }
}

import Foundation
import Testing

/// The documentation's Swift is code that the tests compile and, where it
/// does something, run: every ```swift block of every DocC article and of
/// the README is quoted verbatim from a region of a compiled file
/// (``DocumentationSources`` says where regions are found and how they are
/// marked). A block no region matches fails, naming the document, the line
/// and the block; so does a region its document no longer quotes as it is.
@Suite struct ArticleExampleTests {
    @Test func everySwiftBlockIsQuotedFromACompiledRegion() throws {
        let (regions, _) = try DocumentationSources.regions()
        var checked = 0
        for (name, text) in try DocumentationSources.documents() {
            for block in DocumentationSources.codeBlocks(in: text, document: name) where block.language == "swift" {
                checked += 1
                if regions.contains(where: { $0.documents.contains(name) && $0.text == block.text }) { continue }
                Issue.record("""
                    \(name):\(block.line): this swift block is quoted from no compiled region. Put its code between \
                    `\(DocumentationSources.beginMarker) \(name)` and `\(DocumentationSources.endMarker)` in a file under \
                    Tests/LensDBTests/Docs, make it compile (and run), and quote those lines verbatim.\
                    \(Self.nearest(block, among: regions))
                    \(block.text)
                    """)
            }
        }
        // Guards against a wrong path finding nothing to check.
        #expect(checked >= 15, "only \(checked) swift blocks found")
    }

    @Test func everyRegionIsQuotedByTheDocumentItNames() throws {
        let documents = Dictionary(uniqueKeysWithValues: try DocumentationSources.documents().map { ($0.name, $0.text) })
        let (regions, _) = try DocumentationSources.regions()
        #expect(regions.count >= 15, "only \(regions.count) regions found")
        for region in regions {
            for name in region.documents {
                guard let text = documents[name] else {
                    Issue.record("\(region.file):\(region.line): the region names \(name), which is not an article of the catalog or the README")
                    continue
                }
                let blocks = DocumentationSources.codeBlocks(in: text, document: name).filter { $0.language == "swift" }
                #expect(blocks.contains { $0.text == region.text },
                        "\(region.file):\(region.line): \(name) does not quote this region as it is now (a swift block of exactly these lines):\n\(region.text)")
            }
        }
    }

    @Test func regionMarkersArePairedAndNamed() throws {
        for problem in try DocumentationSources.regions().problems { Issue.record(Comment(rawValue: problem)) }
    }

    /// A block that is not tagged `swift` is not compiled, so every block must
    /// say what it is: an untagged one could be Swift that escaped the check.
    @Test func everyCodeBlockNamesItsLanguage() throws {
        for (name, text) in try DocumentationSources.documents() {
            for block in DocumentationSources.codeBlocks(in: text, document: name)
            where !DocumentationSources.languages.contains(block.language) {
                Issue.record("""
                    \(name):\(block.line): a code block tagged "\(block.language)"; tag it with one of \
                    \(DocumentationSources.languages.sorted()) (`swift` only for code a region compiles)
                    """)
            }
        }
    }

    @Test func fencesAndMarkersAreFoundAsWritten() {
        let article = "Intro\n\n```swift\nlet a = 1\n\nlet b = 2\n```\n\n- item\n\n  ```sh\n  swift build\n  ```\n```\nuntagged\n```\n"
        let blocks = DocumentationSources.codeBlocks(in: article, document: "A.md")
        #expect(blocks.map(\.language) == ["swift", "sh", ""])
        #expect(blocks.map(\.text) == ["let a = 1\n\nlet b = 2", "swift build", "untagged"])
        #expect(blocks.map(\.line) == [3, 11, 14])

        let source = "    // article:begin A.md B.md\n        x()\n\n    y()\n    // article:end\n// article:begin\n// article:end\n// article:end\n"
        let found = DocumentationSources.markedRegions(in: source, file: "F.swift")
        #expect(found.regions.map(\.text) == ["    x()\n\ny()", ""])
        #expect(found.regions.map(\.documents) == [["A.md", "B.md"], []])
        #expect(found.problems.count == 2)  // the unnamed begin, the unmatched end
    }

    /// Where the block departs from the region of its document that it is
    /// closest to, if it has one: usually a sample edited on one side only.
    static func nearest(_ block: DocumentationSources.CodeBlock, among regions: [DocumentationSources.Region]) -> String {
        let blockLines = block.text.components(separatedBy: "\n")
        let candidates = regions.filter { $0.documents.contains(block.document) }.map { region -> (DocumentationSources.Region, Int) in
            let lines = region.text.components(separatedBy: "\n")
            return (region, zip(lines, blockLines).prefix { $0 == $1 }.count)
        }
        guard let (region, same) = candidates.max(by: { $0.1 < $1.1 }), same > 0 else { return "" }
        let lines = region.text.components(separatedBy: "\n")
        let theirs = same < lines.count ? lines[same] : "(the region ends)"
        let ours = same < blockLines.count ? blockLines[same] : "(the block ends)"
        return "\nClosest: \(region.file):\(region.line), which differs at its line \(same + 1):\n  region: \(theirs)\n  block:  \(ours)"
    }
}

// The worked example of the "Value format" article, which quotes the lines
// between the markers verbatim (ArticleExampleTests checks that it does),
// and the bytes the article shows for it, read from the article itself.
import Foundation
import LensDB
import Testing

@Suite struct ValueFormatExample {
    @Test func theArticlesHexDumpIsWhatTheEncoderWrites() throws {
        // article:begin ValueFormatSpecification.md
        struct Pet: Codable {
            var name: String; var age: Int; var weight: Double; var tags: [String]
            var born: Date; var owner: String?; var visits: [String: Int]
        }
        let rex = Pet(name: "Rex", age: 3, weight: 1.5, tags: ["good"],
                      born: Date(timeIntervalSinceReferenceDate: 0), owner: nil,
                      visits: ["vet": -1, "park": 64])
        let bytes = try ValueEncoder().encode(rex)
        // article:end
        let article = try String(contentsOf: DocumentationSources.root.appendingPathComponent(
            "\(DocumentationSources.catalog)/ValueFormatSpecification.md"), encoding: .utf8)
        let blocks = DocumentationSources.codeBlocks(in: article, document: "ValueFormatSpecification.md")
        let sample = try #require(blocks.firstIndex { $0.language == "swift" && $0.text.contains("struct Pet") })
        let dump = try #require(blocks.dropFirst(sample + 1).first, "no hex dump after the example")
        #expect(Self.hexBytes(dump.text) == bytes)
        #expect(bytes.count == 84)
    }

    /// The bytes of a dump whose lines start with two-digit hex bytes and end
    /// with a comment.
    static func hexBytes(_ dump: String) -> [UInt8] {
        dump.split(separator: "\n").flatMap { line in
            line.split(separator: " ").prefix { $0.count == 2 && UInt8($0, radix: 16) != nil }.map { UInt8($0, radix: 16)! }
        }
    }
}

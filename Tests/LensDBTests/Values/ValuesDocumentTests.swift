import Foundation
import Testing
@testable import LensDB

@Suite struct ValuesDocumentTests {
    @Test func literalsBuildTheMatchingCases() {
        let document: Document = ["n": nil, "b": true, "i": 3, "d": 1.5, "s": "x", "a": [1, "two"]]
        #expect(document["n"] == .null)
        #expect(document["b"] == .bool(true))
        #expect(document["i"] == .int(3))
        #expect(document["d"] == .double(1.5))
        #expect(document["s"] == .string("x"))
        #expect(document["a"] == .array([.int(1), .string("two")]))
    }

    @Test func subscriptsReturnNullForMissingKeysAndIndicesAndChain() {
        let document: Document = ["a": ["b": [10, 20]]]
        #expect(document["a"]["b"][1] == 20)
        #expect(document["a"]["missing"]["deeper"] == .null)
        #expect(document["a"]["b"][5] == .null)
        #expect(document[0] == .null)
        #expect(Document.string("x")["key"] == .null)
    }

    @Test func settingKeysCreatesObjectsAndSettingIndicesReplacesElements() {
        var document: Document = nil
        document["protection"]["enabled"] = true
        document["list"] = [1, 2]
        document["list"][0] = "first"
        #expect(document == ["protection": ["enabled": true], "list": ["first", 2]])
        #expect(document.removeValue(forKey: "list") == ["first", 2])
        #expect(document == ["protection": ["enabled": true]])
    }

    @Test func jsonRenderingIsSortedEscapedAndDeterministic() {
        let document: Document = [
            "z": [1, 2.5, -0.0], "a": "quote\" backslash\\ newline\n tab\t nul\u{0} é😀",
            "n": nil, "t": true, "big": .uint(UInt64.max), "inf": .double(.infinity), "nan": .double(.nan),
        ]
        #expect(document.jsonString() == #"{"a":"quote\" backslash\\ newline\n tab\t nul\u0000 é😀","big":18446744073709551615,"inf":Infinity,"n":null,"nan":NaN,"t":true,"z":[1,2.5,-0.0]}"#)
        #expect(Document.object([:]).jsonString(pretty: true) == "{}")
        #expect((["a": [1, 2], "b": [:]] as Document).jsonString(pretty: true) == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}")
    }

    @Test func typesJSONLacksRenderAsStrings() {
        let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let document: Document = ["d": .date(Date(timeIntervalSince1970: 0)), "u": .uuid(id), "b": .bytes([1, 2, 3])]
        #expect(document.jsonString() == #"{"b":"AQID","d":"1970-01-01T00:00:00.000Z","u":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#)
    }

    @Test func jsonParsingReadsEveryKindOfValue() throws {
        let json = #" { "a" : [ 1 , -2 , 3.5e2 , 18446744073709551615, 1e400 ] , "s" : "\u00e9\ud83d\ude00\n\/" , "n" : null , "f" : false } "#
        let document = try Document(json: json)
        #expect(document == ["a": [1, -2, 350.0, .uint(UInt64.max), .double(.infinity)], "s": "é😀\n/", "n": nil, "f": false])
        #expect(try Document(json: Array("[]".utf8)) == [])
    }

    @Test(arguments: ["", "[", "{\"a\"}", "[1,]", "01", "1.", "-", "\"\\x\"", "\"abc", "tru", "[1] x", "{\"a\":1,}", "\"\u{1}\""])
    func malformedJSONThrowsDataCorrupted(json: String) {
        #expect(throws: DecodingError.self) { try Document(json: json) }
    }

    @Test func codableValuesConvertToDocumentsAndBack() throws {
        let customer = sampleCustomer()
        let document = try DocumentEncoder().encode(customer)
        #expect(document["address"]["city"] == "Paris")
        #expect(document["id"] == -9)
        #expect(document["nickname"] == "z")
        #expect(try DocumentDecoder().decode(Customer.self, from: document) == customer)
    }

    @Test func documentParsedFromJSONDecodesAsATypedValue() throws {
        let json = #"{"date":12.5,"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","data":"AAEC/w==","url":"https://example.com","decimal":"1.25","float":2}"#
        let special = try DocumentDecoder().decode(Special.self, from: Document(json: json))
        #expect(special.date == Date(timeIntervalSinceReferenceDate: 12.5))
        #expect(special.data == Data([0, 1, 2, 255]))
        #expect(special.decimal == Decimal(string: "1.25"))
        #expect(special.float == 2)
    }

    @Test func datesRenderedAsJSONDecodeBackAsDates() throws {
        let pet = Pet(name: "Rex", age: 3, weight: 1.5, tags: [], born: Date(timeIntervalSince1970: 1_700_000_000.25), owner: nil, visits: [:])
        let json = try DocumentEncoder().encode(pet).jsonString()
        #expect(json.contains("2023-11-14T22:13:20.250Z"))
        #expect(try DocumentDecoder().decode(Pet.self, from: Document(json: json)) == pet)
        #expect(throws: DecodingError.self) { try DocumentDecoder().decode(Date.self, from: "yesterday") }
    }

    /// ISO 8601 text covers years 1 to 9999; past them the formatter clamps
    /// (to 4713 BC for NaN), so such a date is its seconds since 2001, a
    /// number, which decodes back as the same date.
    @Test func datesISO8601CannotWriteAreNumbersInJSON() throws {
        #expect(Document.date(Date(timeIntervalSinceReferenceDate: .nan)).jsonString() == "NaN")
        #expect(Document.date(Date(timeIntervalSinceReferenceDate: .infinity)).jsonString() == "Infinity")
        #expect(Document.date(Date(timeIntervalSinceReferenceDate: -.infinity)).jsonString() == "-Infinity")
        #expect(Document.date(Date(timeIntervalSince1970: 253_402_300_799)).jsonString() == #""9999-12-31T23:59:59.000Z""#)
        #expect(Document.date(Date(timeIntervalSince1970: -62_135_596_800)).jsonString().hasPrefix(#""0001-"#))
        for date in [Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: -62_135_596_801), Date(timeIntervalSinceReferenceDate: 1e15)] {
            let json = Document.date(date).jsonString()
            #expect(Double(json) == date.timeIntervalSinceReferenceDate, "\(json)")
            #expect(try DocumentDecoder().decode(Date.self, from: Document(json: json)) == date)
        }
    }

    @Test func typedBytesShowAsJSONWithoutTheType() throws {
        let bytes = try ValueEncoder().encode(Address(street: "1 Main St", city: "Paris", zip: nil))
        #expect(try Document(decodingBinary: bytes).jsonString() == #"{"city":"Paris","street":"1 Main St"}"#)
    }

    @Test func documentThroughFoundationJSONRoundTrips() throws {
        let document: Document = ["a": [1, 2.5, "x", nil, true], "b": ["c": .uint(UInt64.max)]]
        let data = try JSONEncoder().encode(document)
        #expect(try JSONDecoder().decode(Document.self, from: data) == document)
    }
}

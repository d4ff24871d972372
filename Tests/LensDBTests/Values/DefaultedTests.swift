import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// `@Defaulted` keeps its contract with every decoder: a missing key
/// decodes to the provider's default, a present one as the plain field
/// would, and it encodes as the plain field does.
@Suite struct DefaultedTests {
    enum NoPhone: DefaultValueProvider { static var defaultValue: String { "none" } }
    enum NoNickname: DefaultValueProvider { static var defaultValue: String? { "anonymous" } }

    struct Old: Codable { var name: String }
    struct New: Codable, Equatable {
        var name: String
        @Defaulted<NoPhone> var phone: String
    }
    struct Plain: Codable { var name: String; var phone: String }
    struct OptionalField: Codable, Equatable {
        var name: String
        @Defaulted<NoNickname> var nickname: String?
    }

    @Test func aMissingKeyDecodesToTheDefaultWithValueDecoderAndJSONDecoder() throws {
        let expected = New(name: "Ada", phone: "none")
        #expect(try ValueDecoder().decode(New.self, from: ValueEncoder().encode(Old(name: "Ada"))) == expected)
        #expect(try JSONDecoder().decode(New.self, from: JSONEncoder().encode(Old(name: "Ada"))) == expected)
        #expect(try DocumentDecoder().decode(New.self, from: ["name": "Ada"]) == expected)
    }

    @Test func aPresentKeyDecodesItsValueWithValueDecoderAndJSONDecoder() throws {
        let value = New(name: "Ada", phone: "555-0100")
        #expect(try ValueDecoder().decode(New.self, from: ValueEncoder().encode(value)) == value)
        #expect(try JSONDecoder().decode(New.self, from: JSONEncoder().encode(value)) == value)
        #expect(try DocumentDecoder().decode(New.self, from: DocumentEncoder().encode(value)) == value)
    }

    @Test func itEncodesExactlyAsThePlainFieldDoes() throws {
        let plain = Plain(name: "Ada", phone: "555-0100")
        let wrapped = New(name: "Ada", phone: "555-0100")
        #expect(try ValueEncoder().encode(wrapped) == ValueEncoder().encode(plain))
        #expect(try DocumentEncoder().encode(wrapped) == ["name": "Ada", "phone": "555-0100"])
        let json = JSONEncoder()
        json.outputFormatting = .sortedKeys
        #expect(try json.encode(wrapped) == json.encode(plain))
    }

    /// A stored `nil` is a value, not a missing key: it stays `nil`.
    @Test func anOptionalStoredAsNilStaysNilAndOnlyAMissingKeyGetsTheDefault() throws {
        let none = OptionalField(name: "Ada", nickname: nil)
        #expect(try ValueDecoder().decode(OptionalField.self, from: ValueEncoder().encode(none)) == none)
        #expect(try JSONDecoder().decode(OptionalField.self, from: Data(#"{"name":"Ada","nickname":null}"#.utf8)) == none)
        #expect(try JSONDecoder().decode(OptionalField.self, from: Data(#"{"name":"Ada"}"#.utf8)).nickname == "anonymous")
        #expect(try ValueDecoder().decode(OptionalField.self, from: ValueEncoder().encode(Old(name: "Ada"))).nickname == "anonymous")
    }

    @Test func aPresentValueOfTheWrongTypeStillFails() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(New.self, from: Data(#"{"name":"Ada","phone":5}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try DocumentDecoder().decode(New.self, from: ["name": "Ada", "phone": .null])
        }
    }

    enum LightTheme: DefaultValueProvider { static var defaultValue: String { "light" } }
    struct SettingsV1: Codable, Sendable, Equatable { var user: String }
    struct SettingsV2: Codable, Sendable, Equatable {
        var user: String
        @Defaulted<LightTheme> var theme: String
    }

    /// Root lenses decode with the same containers: a stored document
    /// without the field opens, and a key-path lens writes the field.
    @Test func aRootLensOpensAnOldDocumentAndWritesTheDefaultedFieldAcrossAReopen() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try lensStore(fileSystem)
            try store.root(SettingsV1.self, named: "settings", default: SettingsV1(user: "")).set(SettingsV1(user: "ada"))
            store.close()
        }
        do {
            let store = try lensStore(fileSystem)
            let settings = try store.root(SettingsV2.self, named: "settings", default: SettingsV2(user: "", theme: "light"))
            #expect(settings.value == SettingsV2(user: "ada", theme: "light"))
            try settings.lens(\.theme).set("dark")
            store.close()
        }
        let store = try lensStore(fileSystem)
        defer { store.close() }
        #expect(try store.root(SettingsV2.self, named: "settings", default: SettingsV2(user: "", theme: "light")).value.theme == "dark")
        #expect(try store.root(named: "settings").value == ["user": "ada", "theme": "dark"])
    }
}

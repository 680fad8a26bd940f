import Foundation
import Testing
@testable import PinproxyCore

/// SPEC §2.1 `"pins": "learn"`: which certificates a verified chain teaches,
/// and the learned-pins file read back exactly as written, or refused with
/// the JSON path and line of what is wrong.
@Suite("Learned pins: what a chain teaches, and the file they are kept in")
struct LearnedPinsTests {
    static let learnedAt = Date(timeIntervalSince1970: 1_796_040_000)

    static func pin(_ certificate: CertificateFacts) -> SPKIPin { SPKIPin(digest: certificate.spkiSHA256)! }

    @Test("a verified chain teaches its leaf's and its issuer's keys, never the root's")
    func leafAndIssuer() throws {
        let learned = try #require(LearnedPins(learningFrom: [FakePKI.leaf, FakePKI.intermediate, FakePKI.root],
                                               host: "api.example.com", at: Self.learnedAt))
        #expect(learned == LearnedPins(pins: [Self.pin(FakePKI.leaf), Self.pin(FakePKI.intermediate)],
                                       host: "api.example.com", learnedAt: Self.learnedAt,
                                       subjects: ["CN=api.example.com", "CN=Example Intermediate"]))
    }

    @Test("a chain of one teaches that one key; an empty chain teaches nothing")
    func shortChains() throws {
        let single = try #require(LearnedPins(learningFrom: [FakePKI.selfSigned], host: "api.example.com", at: Self.learnedAt))
        #expect(single.pins == [Self.pin(FakePKI.selfSigned)])
        #expect(LearnedPins(learningFrom: [], host: "api.example.com", at: Self.learnedAt) == nil)
    }

    @Test("the file's text reads back as the same document, rules sorted, one value a line")
    func roundTrip() throws {
        let document = LearnedPinsDocument(rules: [
            "zeta.example.com": LearnedPins(pins: [Self.pin(FakePKI.selfSigned)]),
            "api.example.com": try #require(LearnedPins(learningFrom: [FakePKI.leaf, FakePKI.intermediate],
                                                        host: "api.example.com", at: Self.learnedAt)),
            "*.cdn.example.com": LearnedPins(pins: [Self.pin(FakePKI.leaf)], host: "a.cdn.example.com",
                                             subjects: ["CN=\"quoted\"\nname"]),
        ])
        let text = document.text
        #expect(try LearnedPinsDocument.parse(text, source: "learned-pins.json") == document)
        let keys = text.split(separator: "\n").filter { $0.hasPrefix("    \"") }.map { $0.split(separator: ":")[0] }
        #expect(keys == [#"    "*.cdn.example.com""#, #"    "api.example.com""#, #"    "zeta.example.com""#])
        #expect(text.contains("\n        \"\(Self.pin(FakePKI.leaf))\",\n"))
        #expect(text.contains(#""learned_at": "2026-11-30T12:00:00Z""#))
        // Strict JSON: what jq and Foundation read.
        #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
    }

    @Test("an empty document is a file with no rules, and reads back empty")
    func emptyDocument() throws {
        #expect(LearnedPinsDocument().text == "{\n  \"version\": 1,\n  \"rules\": {}\n}\n")
        #expect(try LearnedPinsDocument.parse("{}", source: "f") == LearnedPinsDocument())
    }

    static let goodPin = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    @Test("a malformed file is refused with the path and line of each problem", arguments: [
        (#"{ "version": 1, "rules": { "a.com": { "pins": ["sha256/AAAA"] } } }"#,
         ConfigurationProblem(path: #"$.rules["a.com"].pins[0]"#, line: 1,
                              message: #"pin "sha256/AAAA" decodes to 3 bytes; a SHA-256 pin is exactly 32 bytes"#,
                              hint: LearnedPinsDocument.resetHint)),
        ("{ \"rules\": {\n \"a.com\": { \"pins\": [\"\(goodPin)\"], \"pinz\": 1 } } }",
         ConfigurationProblem(path: #"$.rules["a.com"].pinz"#, line: 2, message: #"unknown key $.rules["a.com"].pinz; did you mean "pins"?"#)),
        (#"{ "version": 2, "rules": {} }"#,
         ConfigurationProblem(path: "$.version", line: 1, message: "version 2 is not known to this pinproxy (it writes 1)")),
        (#"{ "rules": { "a.com": { "pins": [] } } }"#,
         ConfigurationProblem(path: #"$.rules["a.com"]"#, line: 1, message: "an entry without pins",
                              hint: "delete the entry to learn this rule's pins again")),
        (#"{ "rules": { "a.com": { "pins": ["\#(goodPin)"], "learned_at": "yesterday" } } }"#,
         ConfigurationProblem(path: #"$.rules["a.com"].learned_at"#, line: 1, message: #""yesterday" is not an RFC 3339 time"#)),
        (#"{ "rules": [] }"#,
         ConfigurationProblem(path: "$.rules", line: 1, message: "expected an object of rule keys, found an array")),
    ] as [(String, ConfigurationProblem)])
    func malformed(text: String, expected: ConfigurationProblem) {
        do {
            _ = try LearnedPinsDocument.parse(text, source: "learned-pins.json")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.problems == [expected])
            #expect(error.source == "learned-pins.json")
        }
    }

    @Test("text that is not JSON is refused with its line and the way out")
    func notJSON() {
        do {
            _ = try LearnedPinsDocument.parse("{\n  \"rules\": {\n", source: "/state/learned-pins.json")
            Issue.record("accepted truncated text")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems.first?.hint == LearnedPinsDocument.resetHint)
            #expect(error.description.hasPrefix("/state/learned-pins.json:"))
        }
    }
}

import Foundation
import Testing
@testable import PinproxyCore

/// An unknown `default_policy` string is answered with spellings that load:
/// the hint must never offer a policy object naming the unknown word.
@Suite("Configuration: the default_policy hint")
struct DefaultPolicyHintTests {
    /// Every quoted string and every `{ … }` object the hint suggests, as JSON5 text.
    static func suggestions(in hint: String) -> [String] {
        var found: [String] = []
        var rest = Substring(hint)
        while let start = rest.firstIndex(where: { $0 == "\"" || $0 == "{" }) {
            let closing: Character = rest[start] == "{" ? "}" : "\""
            guard let end = rest[rest.index(after: start)...].firstIndex(of: closing) else { break }
            found.append(String(rest[start...end]))
            rest = rest[rest.index(after: end)...]
        }
        return found
    }

    @Test("each suggestion for an unknown default_policy loads", arguments: ["block", "allow", "anchors", "disable"])
    func suggestionsLoad(word: String) throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let problems = fixture.problems(#"{ "default_policy": "\#(word)" }"#)
        try #require(problems.count == 1)
        #expect(problems[0].message == "unknown default_policy \"\(word)\"")
        let hint = try #require(problems[0].hint)
        let offered = Self.suggestions(in: hint)
        #expect(offered.contains("\"default\"") && offered.contains("\"deny\""), "\(hint)")
        let objects = offered.filter { $0.hasPrefix("{") }
        #expect(objects.count == 1, "\(hint)")
        for suggestion in offered where !suggestion.contains("…") {
            #expect(fixture.problems(#"{ "default_policy": \#(suggestion) }"#) == [], "\(suggestion) from \(hint)")
        }
        // An object that must be completed (`…`) may only name a policy that exists.
        for object in objects where object.contains("…") {
            #expect(object == #"{ "policy": "\#(word)", … }"#)
            #expect(PolicyKind(rawValue: word) != nil, "\(hint)")
        }
    }
}

import Testing
@testable import PinproxyCore

/// Paths as operators read them in problems and warnings: spelled on demand,
/// the same as when they were strings built at every step.
@Suite("JSONPath")
struct JSONPathTests {
    @Test("paths are spelled $, .key, [\"key\"] and [index]", arguments: [
        (JSONPath.root, "$"),
        (JSONPath.root.key("hosts"), "$.hosts"),
        (JSONPath.root.key("hosts").entry("api.example.com").key("pins").index(1), "$.hosts[\"api.example.com\"].pins[1]"),
        (JSONPath.root.key("hosts").entry("plain"), "$.hosts[\"plain\"]"),
        (JSONPath.root.key("a.b"), "$[\"a.b\"]"),
        (JSONPath.root.key("1st"), "$[\"1st\"]"),
        (JSONPath.root.key(""), "$[\"\"]"),
        (JSONPath.root.key("under_score9"), "$.under_score9"),
        (JSONPath.root.entry("say \"hi\" \\ there"), "$[\"say \\\"hi\\\" \\\\ there\"]"),
        (JSONPath.root.key("listeners").index(0).key("listen"), "$.listeners[0].listen"),
    ])
    func spelling(path: JSONPath, expected: String) {
        #expect(path.description == expected)
        #expect("\(path)" == expected)
    }

    @Test("two paths are equal, and hash alike, when they are spelled alike")
    func equality() {
        let built = JSONPath.root.key("hosts").entry("a")
        #expect(built == JSONPath.root.key("hosts").entry("a"))
        #expect(built != JSONPath.root.key("hosts").entry("b"))
        #expect(Set([built, JSONPath.root.key("hosts").entry("a")]).count == 1)
        // `entry` always brackets; `key` brackets only what is not an identifier: these spell the same.
        #expect(JSONPath.root.key("a.b") == JSONPath.root.entry("a.b"))
    }
}

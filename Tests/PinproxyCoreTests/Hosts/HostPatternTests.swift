import Testing
@testable import PinproxyCore

@Suite("HostPattern")
struct HostPatternTests {
    @Test("keys normalise to lower case without trailing dot", arguments: [
        ("API.Example.COM.", "api.example.com"),
        ("*.Example.com", "*.example.com"),
        ("**.example.com.", "**.example.com"),
        ("[::1]", "::1"),
        ("127.0.0.1", "127.0.0.1"),
    ])
    func normalises(key: String, normalised: String) throws {
        #expect(try #require(HostPattern(key)).key == normalised)
    }

    @Test("invalid keys are refused", arguments: [
        "", "*", "**", "*.", "a.*.example.com", "*example.com", "ex*ample.com", "*.*.example.com",
        "*.127.0.0.1", "**.::1", "*.[::1]", "exa mple.com", "-bad.example.com", "***.example.com",
    ])
    func refuses(key: String) {
        #expect(HostPattern(key) == nil)
    }

    @Test("matching table, including historic bugs", arguments: [
        // (pattern, host, include_subdomains, expected)
        ("api.example.com", "api.example.com", false, true),
        ("api.example.com", "API.EXAMPLE.COM.", false, true),
        ("api.example.com", "x.api.example.com", false, false),
        ("api.example.com", "x.api.example.com", true, true),
        ("api.example.com", "example.com", true, false),
        ("example.com", "notexample.com", true, false),
        ("example.com", "notexample.com", false, false),
        ("xample.com", "example.com", false, false),
        ("xample.com", "example.com", true, false),
        ("example.com", "xample.com", true, false),
        ("api.domain.net", "domain.com", true, false),
        ("*.foo.com", "bar.foo.com", false, true),
        ("*.foo.com", "bar.foo.com.notfoo.com", false, false),
        ("*.foo.com", "a.b.foo.com", false, false),
        ("*.foo.com", "foo.com", false, false),
        ("*.foo.com", "barfoo.com", false, false),
        ("*.foo.com", "a.b.foo.com", true, false),
        ("**.example.com", "example.com", false, true),
        ("**.example.com", "a.b.example.com", false, true),
        ("**.example.com", "notexample.com", false, false),
        ("**.example.com", "example.com.evil.net", false, false),
        ("127.0.0.1", "127.0.0.1", false, true),
        ("127.0.0.1", "127.0.0.2", true, false),
        ("0.0.1", "127.0.0.1", true, false),
        ("*.0.0.1", "127.0.0.1", false, false),
        ("**.0.1", "127.0.0.1", false, false),
        ("::1", "[::1]", false, true),
    ])
    func matching(pattern: String, host: String, includeSubdomains: Bool, expected: Bool) throws {
        let pattern = try #require(HostPattern(pattern))
        let host = try #require(HostName(host))
        #expect(pattern.matches(host, includeSubdomains: includeSubdomains) == expected)
    }
}

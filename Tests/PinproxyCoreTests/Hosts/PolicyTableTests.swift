import Testing
@testable import PinproxyCore

@Suite("PolicyTable")
struct PolicyTableTests {
    static func rule(_ key: String, _ kind: PolicyKind = .disable, includeSubdomains: Bool = false) -> HostRule {
        HostRule(pattern: HostPattern(key)!, policy: TrustPolicy(kind: kind, includeSubdomains: includeSubdomains))
    }

    static let table = PolicyTable(rules: [
        rule("api.example.com"),
        rule("*.example.com"),
        rule("**.cdn.example.com"),
        rule("*.cdn.example.com"),
        rule("example.org", includeSubdomains: true),
        rule("deep.a.example.org"),
        rule("*.foo.com"),
        rule("api.domain.net", includeSubdomains: true),
        rule("xample.com", includeSubdomains: true),
        rule("127.0.0.1"),
        rule("**.0.1"),
        rule("::1"),
    ], defaultPolicy: .policy(.standard))

    @Test("lookup picks exact, then the longest matching suffix, then the default", arguments: [
        ("api.example.com", "api.example.com"),
        ("API.example.com.", "api.example.com"),
        ("www.example.com", "*.example.com"),
        ("a.www.example.com", nil),
        ("example.com", nil),
        ("cdn.example.com", "**.cdn.example.com"),
        ("img.cdn.example.com", "*.cdn.example.com"),
        ("x.img.cdn.example.com", "**.cdn.example.com"),
        ("example.org", "example.org"),
        ("a.example.org", "example.org"),
        ("deep.a.example.org", "deep.a.example.org"),
        ("x.deep.a.example.org", "example.org"),
        ("notexample.org", nil),
        ("bar.foo.com", "*.foo.com"),
        ("bar.foo.com.notfoo.com", nil),
        ("domain.com", nil),
        ("x.api.domain.net", "api.domain.net"),
        ("example.com.xample.com", "xample.com"),
        ("xample.com", "xample.com"),
        ("axample.com", nil),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.2", nil),
        ("10.0.0.1", nil),
        ("[::1]", "::1"),
    ] as [(String, String?)])
    func lookup(host: String, expectedRule: String?) throws {
        let host = try #require(HostName(host))
        switch Self.table.lookup(host) {
        case .rule(let rule):
            #expect(rule.key == expectedRule)
            #expect(rule.matches(host), "the index must agree with the pattern's own matching")
        case .defaultPolicy(let policy):
            #expect(expectedRule == nil)
            #expect(policy == .standard)
        case .deny:
            Issue.record("default is not deny")
        }
    }

    @Test("default_policy deny denies unlisted hosts only")
    func deny() throws {
        let table = PolicyTable(rules: [Self.rule("api.example.com")], defaultPolicy: .deny)
        #expect(table.lookup(try #require(HostName("other.example.com"))) == .deny)
        #expect(table.lookup(try #require(HostName("api.example.com"))) == .rule(Self.rule("api.example.com")))
        #expect(table.policy(for: try #require(HostName("other.example.com"))) == nil)
    }

    @Test("an empty table answers with the default policy")
    func emptyTable() throws {
        let policy = TrustPolicy(kind: .pinPublicKeys, pins: [SPKIPin(digest: [UInt8](repeating: 7, count: 32))!])
        let table = PolicyTable(defaultPolicy: .policy(policy))
        #expect(table.lookup(try #require(HostName("a.b"))) == .defaultPolicy(policy))
    }

    @Test("assigning rules rebuilds the index")
    func reassign() throws {
        var table = PolicyTable()
        table.rules = [Self.rule("*.example.com")]
        #expect(table.lookup(try #require(HostName("a.example.com"))) == .rule(Self.rule("*.example.com")))
    }

    @Test("the first of two rules for the same slot wins")
    func firstWins() throws {
        let first = Self.rule("**.example.com", .anchors)
        let table = PolicyTable(rules: [first, Self.rule("example.com", .disable, includeSubdomains: true)])
        #expect(table.lookup(try #require(HostName("a.example.com"))) == .rule(first))
    }
}

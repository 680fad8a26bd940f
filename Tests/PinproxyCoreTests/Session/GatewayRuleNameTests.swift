import Testing
@testable import PinproxyCore

/// `RequestRules.ruleName(for:)` answers a gateway's fixed upstream from a
/// table made once per generation; it must answer exactly as a lookup in the
/// policy table would, for gateway upstreams and every other host alike.
@Suite("RequestRules: the rule of a gateway's upstream, looked up once")
struct GatewayRuleNameTests {
    static func rule(_ key: String) -> HostRule {
        HostRule(pattern: HostPattern(key)!, policy: TrustPolicy(kind: .disable, includeSubdomains: false))
    }

    static func gateway(_ port: UInt16, to upstream: String) -> ListenerConfiguration {
        ListenerConfiguration(address: Endpoint(host: HostName("127.0.0.1")!, port: port),
                              mode: .gateway(upstream: Endpoint(host: HostName(upstream)!, port: 443)))
    }

    /// What the table itself says, as `ruleName(for:)` must.
    static func expected(_ table: PolicyTable, _ host: HostName) -> String? {
        switch table.lookup(host) {
        case let .rule(matched): matched.key
        case .defaultPolicy: ViolationEvent.defaultPolicyRule
        case .deny: nil
        }
    }

    @Test("gateway upstreams and other hosts get the table's answer: a rule, the default, or a denial",
          arguments: [PolicyTable.DefaultPolicy.policy(.standard), .deny])
    func sameAnswerAsTheTable(defaultPolicy: PolicyTable.DefaultPolicy) throws {
        let table = PolicyTable(rules: [Self.rule("api.example.com"), Self.rule("*.cdn.example.com")], defaultPolicy: defaultPolicy)
        let rules = RequestRules(policies: table, listeners: [
            Self.gateway(8080, to: "api.example.com"), Self.gateway(8081, to: "img.cdn.example.com"),
            Self.gateway(8082, to: "unlisted.example.net"),
            ListenerConfiguration(address: Endpoint(host: HostName("127.0.0.1")!, port: 8083), mode: .forward),
        ])
        for name in ["api.example.com", "img.cdn.example.com", "unlisted.example.net", "other.cdn.example.com",
                     "example.org", "API.example.com"] {
            let host = try #require(HostName(name))
            #expect(rules.ruleName(for: host) == Self.expected(table, host), "\(name)")
        }
        #expect(rules.ruleName(for: try #require(HostName("api.example.com"))) == "api.example.com")
        #expect(rules.ruleName(for: try #require(HostName("img.cdn.example.com"))) == "*.cdn.example.com")
    }

    @Test("a gateway session routes by the generation it is handed: a reload's new rules decide the next request")
    func newGenerationDecides() throws {
        let listener = Self.gateway(8080, to: "api.example.com")
        let upstream = Endpoint(host: try #require(HostName("api.example.com")), port: 443)
        let allowing = RequestRules(policies: PolicyTable(rules: [Self.rule("api.example.com")], defaultPolicy: .deny),
                                    listeners: [listener])
        let denying = RequestRules(policies: PolicyTable(defaultPolicy: .deny), listeners: [listener])
        var script = SessionScript(mode: .gateway(upstream: upstream))
        let head = "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        #expect(script.head(head, rules: allowing).contains(.startExchange(consumedHead: head.utf8.count,
                                                                            upstream: upstream, rule: "api.example.com")))
        var second = SessionScript(mode: .gateway(upstream: upstream))
        let refused = second.head(head, rules: denying)
        #expect(!SessionScript.startsExchange(refused))
        #expect(refused.contains { if case .answerAndClose = $0 { true } else { false } })
    }
}

import PinproxyCore
import Testing

/// Which `hosts` rules a loaded CA's names leave out (SPEC §3.1: their
/// CONNECTs get 403 and `check` fails until `pinproxy ca init` re-issues).
@Suite("interception scope: rules the CA does not cover")
struct InterceptionScopeCoverageTests {
    static func table(_ keys: [String], disabled: Set<String> = [], subdomains: Set<String> = []) throws -> PolicyTable {
        PolicyTable(rules: try keys.map { key in
            HostRule(pattern: try #require(HostPattern(key)),
                     policy: TrustPolicy(kind: disabled.contains(key) ? .disable : .default, includeSubdomains: subdomains.contains(key)))
        })
    }

    @Test("the name each rule needs: the exact host, the suffix of a wildcard or subtree; none for disable or an IP literal")
    func interceptedNames() throws {
        let policies = try Self.table(["api.example.com", "*.cdn.example.com", "**.example.org", "10.0.0.1", "[::1]", "off.example.com"],
                                      disabled: ["off.example.com"])
        #expect(policies.rules.map(InterceptionScope.name(interceptedBy:))
                == ["api.example.com", "cdn.example.com", "example.org", nil, nil, nil])
        #expect(InterceptionScope(policies: policies).names == ["api.example.com", "cdn.example.com", "example.org"])
    }

    @Test("a CA for the config's own scope covers every rule")
    func ownScopeCoversAll() throws {
        let policies = try Self.table(["api.example.com", "*.cdn.example.com", "**.example.org", "10.0.0.1"])
        #expect(InterceptionScope(policies: policies).uncoveredRules(in: policies).isEmpty)
    }

    @Test("rules added after the CA was issued are reported, and a subtree name covers the exact names below it")
    func addedRules() throws {
        let scope = InterceptionScope(names: ["example.com"])
        let policies = try Self.table(["api.example.com", "example.com", "*.cdn.example.com", "example.net", "**.example.org",
                                       "badexample.com", "off.example.net", "192.0.2.1"],
                                      disabled: ["off.example.net"])
        #expect(scope.uncoveredRules(in: policies).map(\.key) == ["example.net", "**.example.org", "badexample.com"])
    }

    @Test("an exact CA name does not cover a rule for its parent or a subtree above it")
    func parentNotCovered() throws {
        let scope = InterceptionScope(names: ["api.example.com"])
        let policies = try Self.table(["example.com", "*.example.com", "v2.api.example.com"], subdomains: ["example.com"])
        #expect(scope.uncoveredRules(in: policies).map(\.key) == ["example.com", "*.example.com"])
    }
}

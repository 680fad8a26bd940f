import Testing
@testable import PinproxyCore

/// The indexed lookup against the rules' own matching (SPEC §2.2 precedence
/// by a scan of every rule), over a table of a few thousand rules of every
/// form, probed with the names each rule covers and names just outside them.
@Suite("PolicyTable: the index against a scan of the rules")
struct PolicyTableAtScaleTests {
    static let rules: [HostRule] = {
        var rules: [HostRule] = []
        for index in 0..<3_000 {
            let domain = "d\(index % 700).example\(index % 3 == 0 ? ".com" : ".net")"
            let key: String
            var includeSubdomains = false
            switch index % 7 {
            case 0: key = "*.\(domain)"
            case 1: key = "**.s\(index).\(domain)"
            case 2: key = "x\(index).\(domain)"; includeSubdomains = true
            case 3: key = "10.\(index / 250).\(index % 250).1"
            default: key = "h\(index).\(domain)"
            }
            rules.append(HostRule(pattern: HostPattern(key)!, policy: TrustPolicy(kind: .disable, includeSubdomains: includeSubdomains)))
        }
        // No two rules claim the same names (ConfigurationLoader refuses that): `*.dN` repeats are dropped.
        var seen = Set<String>()
        return rules.filter { seen.insert($0.key).inserted }
    }()

    static let table = PolicyTable(rules: rules, defaultPolicy: .deny)

    /// SPEC §2.2 by brute force: the exact key, else the covering rule anchored
    /// at the longest suffix, `*.` before `**.`/include_subdomains at equal length.
    static func reference(_ host: HostName) -> String? {
        if let exact = rules.first(where: { $0.pattern.form == .exact(host) }) { return exact.key }
        let covering = rules.filter { $0.matches(host) }
        func rank(_ rule: HostRule) -> (Int, Int) {
            if case .oneLabelBelow = rule.pattern.form { return (rule.pattern.anchor.value.utf8.count, 1) }
            return (rule.pattern.anchor.value.utf8.count, 0)
        }
        return covering.max { rank($0) < rank($1) }?.key
    }

    static var probes: [HostName] {
        var names: [String] = []
        for rule in rules.prefix(400) {
            let anchor = rule.pattern.anchor.value
            names += [anchor, "a.\(anchor)", "a.b.\(anchor)", "z\(anchor)", String(anchor.dropFirst())]
        }
        names += ["example.com", "com", "10.0.0.2", "10.1.1.1", "unrelated.test"]
        return names.compactMap { HostName($0) }
    }

    @Test("every probe gets the rule a scan of the rules picks")
    func agreesWithScan() {
        for host in Self.probes {
            let position = Self.table.rulePosition(for: host)
            #expect(position.map { Self.rules[$0].key } == Self.reference(host), "\(host)")
            if case .rule(let rule) = Self.table.lookup(host) {
                #expect(rule.key == position.map { Self.rules[$0].key })
            } else {
                #expect(position == nil)
            }
        }
    }

    @Test("every rule is found by its key at its position; keys of no rule are not")
    func positionsByKey() {
        for (position, rule) in Self.rules.enumerated() {
            #expect(Self.table.rulePosition(forKey: rule.key) == position, "\(rule.key)")
        }
        // x…: exact names with include_subdomains share the subtree index with ** keys; neither stands for the other.
        let includesSubdomains = Self.rules.first { $0.policy.includeSubdomains }!
        for key in ["**." + includesSubdomains.key, "*." + includesSubdomains.key, "unlisted.example.com", "", "default_policy"] {
            #expect(Self.table.rulePosition(forKey: key) == nil, "\(key)")
        }
    }
}

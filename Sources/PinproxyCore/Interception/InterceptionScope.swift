/// The DNS names the local interception CA may issue for (SPEC §3.1): the
/// permitted subtrees of the critical name constraints on its root and its
/// issuing certificate, derived from the `hosts` rules that are intercepted.
///
/// A dNSName constraint `example.com` permits `example.com` and every name
/// below it (RFC 5280 §4.2.1.10); there is no way to constrain to one exact
/// name. So an exact rule contributes its name, and a wildcard, `**.` or
/// `include_subdomains` rule the name its subtree starts from; pinproxy itself
/// only ever issues for the exact CONNECT host of a rule that matched it.
/// IP literals are never permitted: the CA excludes every IP range.
public struct InterceptionScope: Sendable, Hashable {
    /// Lower-case names, none below another (the smallest set covering the same names), sorted.
    public let names: [String]

    public init(names: some Sequence<String>) {
        let lowered = Set(names.map { $0.lowercased() })
        self.names = lowered.filter { name in !lowered.contains { Self.isBelow(name, $0) } }.sorted()
    }

    /// The names the `hosts` rules of `policies` intercept: every rule but
    /// `disable` (tunnelled: interception would remove the client's own check)
    /// and IP literals.
    public init(policies: PolicyTable) {
        self.init(names: policies.rules.compactMap(Self.name(interceptedBy:)))
    }

    /// The name `rule` needs the CA to permit; nil for a rule that is never
    /// intercepted (`disable`, or an IP literal).
    public static func name(interceptedBy rule: HostRule) -> String? {
        guard rule.policy.kind != .disable else { return nil }
        switch rule.pattern.form {
        case let .exact(host): return host.isIPAddress ? nil : host.value
        case let .oneLabelBelow(suffix), let .subtree(suffix): return suffix.value
        }
    }

    /// The rules of `policies` that would be intercepted but whose names this
    /// scope does not cover: their CONNECTs get `403` until `pinproxy ca init`
    /// re-issues the CA (SPEC §3.1).
    public func uncoveredRules(in policies: PolicyTable) -> [HostRule] {
        policies.rules.filter { rule in
            guard let name = Self.name(interceptedBy: rule) else { return false }
            return !covers(InterceptionScope(names: [name]))
        }
    }

    /// Whether a certificate for `host` falls inside these constraints.
    public func covers(_ host: HostName) -> Bool {
        guard !host.isIPAddress else { return false }
        return names.contains { host.value == $0 || Self.isBelow(host.value, $0) }
    }

    /// Whether every name of `other` is covered here (a CA issued for `self` can serve `other`).
    public func covers(_ other: InterceptionScope) -> Bool {
        other.names.allSatisfy { name in names.contains { name == $0 || Self.isBelow(name, $0) } }
    }

    /// `name` is a proper subdomain of `base` (label-aligned).
    private static func isBelow(_ name: String, _ base: String) -> Bool {
        name.count > base.count && name.hasSuffix("." + base)
    }
}

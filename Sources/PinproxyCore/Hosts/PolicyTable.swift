/// The host rules of a configuration, indexed for the per-request lookup
/// (SPEC §2.2).
///
/// Precedence: a rule whose key is exactly the host; then the wildcard or
/// `include_subdomains` rule anchored at the longest suffix of the host; then
/// `default_policy`. At equal suffix, `*.suffix` (one label) is more specific
/// than `**.suffix` or `suffix` with `include_subdomains`, and wins.
///
/// Lookups are on the hot path: the index is three dictionaries built once at
/// init; a lookup walks the host's dots left to right (longest suffix first)
/// and probes with substrings of the host's own storage, so it neither scans
/// the rules nor allocates.
///
/// Invariant: when two rules claim the same index slot the first one given
/// wins; `ConfigurationLoader` refuses such configurations before they get here.
public struct PolicyTable: Sendable {
    /// What unlisted hosts get (`default_policy`).
    public enum DefaultPolicy: Sendable, Hashable {
        case policy(TrustPolicy)
        /// Refuse with 403 `http_request_denied`.
        case deny
    }

    /// The outcome of a lookup: the rule that matched, else the default.
    public enum Lookup: Sendable, Hashable {
        case rule(HostRule)
        case defaultPolicy(TrustPolicy)
        case deny
    }

    /// The rules in configuration order; assigning rebuilds the index.
    public var rules: [HostRule] { didSet { rebuildIndex() } }
    public var defaultPolicy: DefaultPolicy

    /// Rules by exact key (names and IP literals).
    private var exact: [Substring: HostRule] = [:]
    /// `*.suffix` rules by suffix.
    private var oneLabelBelow: [Substring: HostRule] = [:]
    /// `**.suffix` rules, and exact names with include_subdomains, by the name they cover from.
    private var subtree: [Substring: HostRule] = [:]

    public init(rules: [HostRule] = [], defaultPolicy: DefaultPolicy = .policy(.standard)) {
        self.rules = rules
        self.defaultPolicy = defaultPolicy
        rebuildIndex()
    }

    private mutating func rebuildIndex() {
        exact = [:]
        oneLabelBelow = [:]
        subtree = [:]
        for rule in rules {
            switch rule.pattern.form {
            case .exact(let host):
                Self.insert(rule, at: host, into: &exact)
                if rule.policy.includeSubdomains, !host.isIPAddress { Self.insert(rule, at: host, into: &subtree) }
            case .oneLabelBelow(let suffix):
                Self.insert(rule, at: suffix, into: &oneLabelBelow)
            case .subtree(let suffix):
                Self.insert(rule, at: suffix, into: &subtree)
            }
        }
    }

    private static func insert(_ rule: HostRule, at name: HostName, into index: inout [Substring: HostRule]) {
        let key = Substring(name.value)
        if index[key] == nil { index[key] = rule }
    }

    /// The rule (or default) that governs `host`.
    public func lookup(_ host: HostName) -> Lookup {
        let name = Substring(host.value)
        if let rule = exact[name] { return .rule(rule) }
        if !host.isIPAddress {
            if let rule = subtree[name] { return .rule(rule) }
            var isFirstSuffix = true
            var rest = name
            while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
                rest = rest[rest.index(after: dot)...]
                if isFirstSuffix, let rule = oneLabelBelow[rest] { return .rule(rule) }
                if let rule = subtree[rest] { return .rule(rule) }
                isFirstSuffix = false
            }
        }
        switch defaultPolicy {
        case .policy(let policy): return .defaultPolicy(policy)
        case .deny: return .deny
        }
    }

    /// The policy that governs `host`, or nil when it is denied.
    public func policy(for host: HostName) -> TrustPolicy? {
        switch lookup(host) {
        case .rule(let rule): rule.policy
        case .defaultPolicy(let policy): policy
        case .deny: nil
        }
    }
}

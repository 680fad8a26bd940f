/// The host rules of a configuration, indexed for the per-request lookup
/// (SPEC §2.2).
///
/// Precedence: a rule whose key is exactly the host; then the wildcard or
/// `include_subdomains` rule anchored at the longest suffix of the host; then
/// `default_policy`. At equal suffix, `*.suffix` (one label) is more specific
/// than `**.suffix` or `suffix` with `include_subdomains`, and wins.
///
/// Lookups are on the hot path: the index is three `HostNameIndex` tables of
/// rule positions built once at init; a lookup walks the host's dots left to
/// right (longest suffix first) and probes with substrings of the host's own
/// storage, so it neither scans the rules nor allocates.
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

    /// Positions in `rules` by the name each index is keyed on, which for every
    /// kind of rule is its pattern's anchor: exact keys (names and IP literals);
    /// `*.suffix` rules by suffix; `**.suffix` rules, and exact names with
    /// include_subdomains, by the name they cover from.
    private var exact = HostNameIndex()
    private var oneLabelBelow = HostNameIndex()
    private var subtree = HostNameIndex()

    public init(rules: [HostRule] = [], defaultPolicy: DefaultPolicy = .policy(.standard)) {
        self.rules = rules
        self.defaultPolicy = defaultPolicy
        rebuildIndex()
    }

    private mutating func rebuildIndex() {
        var exact = HostNameIndex(expected: rules.count)
        var oneLabelBelow = HostNameIndex()
        var subtree = HostNameIndex()
        let rules = self.rules
        let anchor = { (position: Int) in Substring(rules[position].pattern.anchor.value) }
        for (position, rule) in rules.enumerated() {
            switch rule.pattern.form {
            case .exact(let host):
                exact.insert(position, key: Substring(host.value), name: anchor)
                if rule.policy.includeSubdomains, !host.isIPAddress {
                    subtree.insert(position, key: Substring(host.value), name: anchor)
                }
            case .oneLabelBelow(let suffix):
                oneLabelBelow.insert(position, key: Substring(suffix.value), name: anchor)
            case .subtree(let suffix):
                subtree.insert(position, key: Substring(suffix.value), name: anchor)
            }
        }
        self.exact = exact
        self.oneLabelBelow = oneLabelBelow
        self.subtree = subtree
    }

    /// The name a rule is indexed under.
    @inline(__always)
    private func anchor(_ position: Int) -> Substring { Substring(rules[position].pattern.anchor.value) }

    /// The position in `rules` of the rule that governs `host`; nil when no rule
    /// does (the default applies).
    public func rulePosition(for host: HostName) -> Int? {
        let name = Substring(host.value)
        if let position = exact.find(name, name: anchor) { return position }
        guard !host.isIPAddress else { return nil }
        if let position = subtree.find(name, name: anchor) { return position }
        var isFirstSuffix = true
        var rest = name
        while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
            rest = rest[rest.index(after: dot)...]
            if isFirstSuffix, let position = oneLabelBelow.find(rest, name: anchor) { return position }
            if let position = subtree.find(rest, name: anchor) { return position }
            isFirstSuffix = false
        }
        return nil
    }

    /// The position in `rules` of the rule whose normalised key is `key`
    /// (`HostRule.key`, as the log's `rule` names it); nil when there is none.
    public func rulePosition(forKey key: String) -> Int? {
        let position: Int?
        // Only a wildcard key starts with "*" (a host name never does): one byte decides.
        if key.utf8.first != UInt8(ascii: "*") {
            position = exact.find(Substring(key), name: anchor)
        } else if key.utf8.starts(with: "**.".utf8) {
            position = subtree.find(Substring(key).dropFirst(3), name: anchor)
        } else {
            position = oneLabelBelow.find(Substring(key).dropFirst(2), name: anchor)
        }
        // The subtree index also holds exact names with include_subdomains: the key decides.
        guard let position, rules[position].key == key else { return nil }
        return position
    }

    /// The rule (or default) that governs `host`.
    public func lookup(_ host: HostName) -> Lookup {
        if let position = rulePosition(for: host) { return .rule(rules[position]) }
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

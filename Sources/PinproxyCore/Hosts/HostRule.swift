/// One `hosts` entry: the pattern and the policy for the names it covers.
public struct HostRule: Sendable, Hashable {
    /// The normalised key, reported as `rule` in violation events.
    public var key: String
    public var pattern: HostPattern
    public var policy: TrustPolicy

    /// `key` is taken from `pattern`, so the two can never disagree.
    public init(pattern: HostPattern, policy: TrustPolicy) {
        self.key = pattern.key
        self.pattern = pattern
        self.policy = policy
    }

    /// Whether this rule covers `host` (its pattern, widened by the policy's `include_subdomains`).
    public func matches(_ host: HostName) -> Bool {
        pattern.matches(host, includeSubdomains: policy.includeSubdomains)
    }
}

/// Host policies keyed by pattern (SPEC §2.2). PLACEHOLDER replaced by the Hosts work.
public struct PolicyTable: Sendable {
    public enum DefaultPolicy: Sendable, Hashable {
        case policy(TrustPolicy)
        case deny
    }
    public var defaultPolicy: DefaultPolicy
    public init(defaultPolicy: DefaultPolicy = .policy(.standard)) {
        self.defaultPolicy = defaultPolicy
    }
}

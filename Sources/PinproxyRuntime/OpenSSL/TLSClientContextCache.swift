import PinproxyCore

/// One `TLSClientContext` per distinct set of TLS settings within a
/// configuration generation: host rules that differ only in what they pin
/// share one `SSL_CTX`. The verdict is per connection (the verify callback
/// reaches the connection's own `UpstreamHandshake`, which holds its rule's
/// check and material), and session resumption stays bound to the rule that
/// verified (the pool keys sessions by rule). An `SSL_CTX` costs about 1.1M
/// instructions and 14 KB; a configuration of 100,000 pinned hosts has a
/// handful of distinct settings.
final class TLSClientContextCache {
    /// What an `SSL_CTX` is made of (everything `TLSClientContext` reads
    /// from its policy and material).
    struct Settings: Hashable {
        var minTLSVersion: TLSVersionFloor
        var requireForwardSecrecy: Bool
        /// The client asks for OCSP staples (and installs the status callback).
        var requestsStaples: Bool
        var clientCredentials: ClientCredentialFiles?
        /// `anchors` replaces the system store: the files it is made of; nil = the system store.
        var anchorFiles: [String]?

        init(_ policy: TrustPolicy) {
            minTLSVersion = policy.minTLSVersion
            requireForwardSecrecy = policy.requireForwardSecrecy
            requestsStaples = policy.ocspStapling != .off && policy.kind != .disable
            clientCredentials = policy.clientCredentials
            anchorFiles = policy.kind == .anchors ? policy.anchorFiles : nil
        }
    }

    private var contexts: [Settings: TLSClientContext] = [:]

    init() {}

    /// The context for `policy`, made from `material` the first time these settings are asked for.
    func context(for policy: TrustPolicy, material: PolicyMaterial, trustStore: TrustStore) throws -> TLSClientContext {
        let settings = Settings(policy)
        if let context = contexts[settings] { return context }
        let context = try TLSClientContext(policy: policy, material: material, trustStore: trustStore)
        contexts[settings] = context
        return context
    }

    /// How many distinct contexts were made.
    var count: Int { contexts.count }
}

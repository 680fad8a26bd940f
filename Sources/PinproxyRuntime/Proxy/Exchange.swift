import Foundation
import PinproxyCore

/// The runtime side of one exchange (its decisions live in the session's
/// `ExchangeProgress`): the policy and configuration it runs under, the
/// upstream connection while in use (or the connector making one), the
/// verdict of its handshake, and the two body relays with their back-pressure.
final class Exchange {
    let policy: PreparedPolicy
    let configuration: ActiveConfiguration
    let poolKey: PoolKey

    var connector: UpstreamConnector?
    var upstream: UpstreamConnection?
    /// The verdict to record: a report-only pass, or the block.
    var verdict: TrustVerdict?
    /// The peer a blocked handshake was with (an attached connection knows its own).
    var blockedPeer: SocketAddress?

    var requestBody: BodyRelay
    var responseBody: BodyRelay?
    /// Client reading paused because the upstream output is full.
    var requestPaused = false
    /// Upstream reading paused because the client output is full.
    var responsePaused = false

    init(request: HTTPRequestHead, upstream endpoint: Endpoint, policy: PreparedPolicy, configuration: ActiveConfiguration) {
        self.policy = policy
        self.configuration = configuration
        poolKey = PoolKey(host: endpoint.host, port: endpoint.port, rule: policy.ruleName,
                          generation: configuration.generation)
        requestBody = BodyRelay(framing: request.bodyFraming)
    }

    /// Cancels a connection attempt, or closes the attached connection
    /// without returning it to the pool. Idempotent.
    func abandonUpstream() {
        connector?.cancel()
        connector = nil
        upstream?.delegate = nil
        upstream?.close()
        upstream = nil
    }

    /// The violation event for this exchange's verdict (SPEC §4): never the
    /// query string, headers or body.
    func violationEvent(_ verdict: TrustVerdict, peer: SocketAddress, progress: ExchangeProgress,
                        client: SocketAddress, listener: String) -> ViolationEvent {
        let rule = policy.policy
        return ViolationEvent(
            time: Date(), action: verdict.decision.permitsRelay ? .reported : .blocked,
            reason: verdict.decision.reason ?? .chainUntrusted,
            host: progress.routed.upstream.host.value, port: progress.routed.upstream.port,
            peerAddress: peer.description, rule: policy.ruleName, policy: rule.kind,
            enforce: rule.enforce, includeSubdomains: rule.includeSubdomains,
            knownPins: policy.knownPins, servedChain: verdict.chain.served,
            clientAddress: client.description, listener: listener,
            configGeneration: configuration.generation,
            requestMethod: progress.request.method, requestTarget: progress.routed.pathWithoutQuery,
            detail: verdict.decision.detail ?? "")
    }
}

import Foundation
import PinproxyCore

/// One request and its response, from the parsed request head to the last
/// body byte. Holds the upstream connection while it is in use.
final class Exchange {
    let request: HTTPRequestHead
    let routed: RoutedRequest
    let policy: PreparedPolicy
    let configuration: ActiveConfiguration
    /// Whether the client connection may serve another request afterwards.
    var clientKeepAlive: Bool

    var connector: UpstreamConnector?
    var upstream: UpstreamConnection?
    /// True when `upstream` came from the pool (its server may have closed it meanwhile).
    var usesPooledConnection = false

    var requestBody: BodyRelay
    var requestComplete = false
    /// Client reading paused because the upstream output is full.
    var requestPaused = false

    var responseHead: HTTPResponseHead?
    var responseBody: BodyRelay?
    var responseComplete = false
    /// Any response byte (informational or final) has been written to the client.
    var responseStarted = false
    /// Upstream reading paused because the client output is full.
    var responsePaused = false

    init(request: HTTPRequestHead, routed: RoutedRequest, policy: PreparedPolicy,
         configuration: ActiveConfiguration, clientKeepAlive: Bool) {
        self.request = request
        self.routed = routed
        self.policy = policy
        self.configuration = configuration
        self.clientKeepAlive = clientKeepAlive
        poolKey = PoolKey(host: routed.upstream.host, port: routed.upstream.port, rule: policy.ruleName,
                          generation: configuration.generation)
        requestBody = BodyRelay(framing: request.bodyFraming)
        requestComplete = requestBody.isComplete
    }

    let poolKey: PoolKey

    /// A request that can be sent again on a fresh connection when a pooled
    /// one turns out to be closed: no body, and nothing came back yet.
    var isRetriableOnFreshConnection: Bool {
        usesPooledConnection && !responseStarted && request.bodyFraming == .none &&
            ["GET", "HEAD", "OPTIONS", "DELETE", "PUT"].contains(request.method)
    }

    /// Releases upstream resources without returning the connection to the pool.
    func abandonUpstream() {
        connector?.cancel()
        connector = nil
        upstream?.delegate = nil
        upstream?.close()
        upstream = nil
    }
}

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

    init(bodyFraming: BodyFraming, poolKey: PoolKey, policy: PreparedPolicy, configuration: ActiveConfiguration) {
        self.policy = policy
        self.configuration = configuration
        self.poolKey = poolKey
        requestBody = BodyRelay(framing: bodyFraming)
    }

    // MARK: the bodies, with back-pressure both ways (SPEC §3)

    /// The framing error in the request body bytes `client` already sent, if
    /// any (`BodyRelay.bufferedFramingError`). Only a chunked body has framing
    /// to check; asking the relay's state first reads it in place, where
    /// calling the walk copies the relay and its framer out of this object
    /// (callgrind: 347 instructions per keep-alive request). Inlined into its
    /// two callers: as a call it cost 80 more.
    @inline(__always)
    func bufferedRequestFramingError(in client: ByteStream) -> HTTPError? {
        guard requestBody.isChunked else { return nil }
        return requestBody.bufferedFramingError(in: client.input)
    }

    /// Moves what `client` sent of the request body upstream; when the
    /// upstream's output is full, stops reading the client until it drains
    /// (`resumeRequest`). Nil without an upstream connection.
    ///
    /// timeouts.idle is for an upstream silent *after* the request: while
    /// the body still moves, the upstream's read timeout starts again with
    /// each piece, so a slow upload is not answered 504 mid-way.
    func pumpRequest(from client: ByteStream) -> BodyProgress? {
        guard let upstream else { return nil }
        let unread = client.input.count
        let progress = requestBody.pump(from: client.input, to: upstream.stream.output)
        if client.input.count != unread {
            upstream.stream.restartReadTimeout()
        }
        // Written at the end of the loop pass: the pause counts what is still
        // queued, and the upstream's drain report (`resumeRequest`) ends it.
        upstream.stream.flush()
        if progress == .needMore, upstream.stream.output.count >= RelayLimits.highWatermark {
            requestPaused = true
            client.stopReading()
            upstream.stream.setWriteLowWatermark(RelayLimits.lowWatermark)
        }
        return progress
    }

    /// Moves what the upstream sent of the response body to `client`; when the
    /// client's output is full, stops reading the upstream until it drains
    /// (`resumeResponse`). Call only once the response body's relay exists.
    func pumpResponse(to client: ByteStream) -> BodyProgress {
        guard let upstream, var body = responseBody else { return .needMore }
        let progress = body.pump(from: upstream.stream.input, to: client.output)
        responseBody = body
        // A body still coming is written at the end of the loop pass
        // (`PassEndWrites`): the pause below counts what is still queued, and
        // the stream's drain report (`resumeResponse`) ends it. A complete one
        // leaves now where the stream can send it (`flushMessageEnd`, a plain
        // client): the client need not wait while the exchange is taken down
        // and the upstream pooled. Every response ends here, a bodiless one
        // too (its relay is complete at the first pump).
        if progress == .complete { client.flushMessageEnd() } else { client.flush() }
        if progress == .needMore, client.output.count >= RelayLimits.highWatermark {
            responsePaused = true
            upstream.stream.stopReading()
            client.setWriteLowWatermark(RelayLimits.lowWatermark)
        }
        return progress
    }

    /// The upstream drained: reading the client again. False when nothing was paused.
    func resumeRequest(client: ByteStream) -> Bool {
        guard requestPaused, let upstream else { return false }
        requestPaused = false
        upstream.stream.setWriteLowWatermark(0)
        client.startReading(timeout: nil)
        return true
    }

    /// The client drained: reading the upstream again. False when nothing was paused.
    func resumeResponse(client: ByteStream) -> Bool {
        guard responsePaused, let upstream else { return false }
        responsePaused = false
        client.setWriteLowWatermark(0)
        upstream.stream.startReading(timeout: upstream.idleTimeout)
        return true
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
                        client: SocketAddress, listener: String, transport: ViolationEvent.ClientTransport) -> ViolationEvent {
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
            detail: verdict.decision.detail ?? "", clientTransport: transport)
    }
}

/// What the executor of a `SessionMachine` must do, in order. The machine
/// decides; the executor only moves bytes, arms timers and talks to the pool.
public enum SessionAction: Sendable, Hashable {
    /// Wait for (more of) a request head: with `idle`, up to `timeouts.idle`
    /// (nothing of a head yet); else until the request-header deadline, which
    /// starts with the first byte of a head (at accept for the first request).
    case awaitRequestHead(idle: Bool)
    /// Parse the buffered client bytes again (a request may be waiting behind the last).
    case readRequestHead
    /// Remove the `consumedHead` bytes of the request head from the client
    /// input, and take a verified connection for `upstream` under `rule` from
    /// the pool, or make one; report `upstreamReady` or `upstreamFailed`.
    case startExchange(consumedHead: Int, upstream: Endpoint, rule: String)
    /// Make a fresh connection (the pooled one was found closed); report as for `startExchange`.
    case reconnectUpstream
    /// Remove the `consumedHead` bytes of a CONNECT head and open a plain TCP
    /// connection to `upstream` (a blind tunnel, under `rule`); report
    /// `tunnelOpened` or `upstreamFailed`.
    case openTunnel(consumedHead: Int, upstream: Endpoint, rule: String)
    /// Answer the CONNECT with these bytes (`200`), then relay the tunnel
    /// blind both ways until both ends close; report `tunnelClosed`.
    case beginTunnel([UInt8])
    /// Answer the CONNECT with these bytes (`200`), keep the verified upstream
    /// connection for the first request inside, and complete a TLS handshake
    /// with the client as `host` (a certificate of the local CA); report
    /// `clientTLSReady` or `clientTLSFailed`.
    case beginInterception([UInt8], host: HostName)
    /// Build and record the violation event of this exchange's verdict (and
    /// post its report); when `blocking`, report `violationRecorded` once it is durable.
    case recordViolation(blocking: Bool)
    /// Write these bytes (the request head) to the upstream now.
    case sendRequestHead([UInt8])
    /// Write these bytes (pinproxy's own interim response) to the client now.
    case sendInterimResponse([UInt8])
    /// Remove the `consumedHead` bytes of an interim response head from the
    /// upstream input, write `relayed` (when the client may see it) to the
    /// client now, and go on relaying the response.
    case relayInterimResponse([UInt8]?, consumedHead: Int)
    /// Remove the `consumedHead` bytes of the final response head from the
    /// upstream input, write these bytes to the client, and relay the body by
    /// `framing` (`dropsChunkFraming`: chunk data without chunk lines, for a
    /// 1.0 client, which gets the body delimited by close).
    case sendResponseHead([UInt8], consumedHead: Int, framing: BodyFraming, dropsChunkFraming: Bool)
    /// Start (or continue) moving the request body upstream; report `requestBody`.
    case relayRequestBody
    /// Parse (or continue relaying) what the upstream sent; report
    /// `responseHead` until a final head, then `responseBody`.
    case relayResponse
    /// The exchange no longer needs its upstream connection: park it in the
    /// pool (`reuse`) or close it.
    case releaseUpstream(reuse: Bool)
    /// The exchange is complete and the connection persists: release the
    /// upstream connection as `releaseUpstream` does, and read the next head.
    case nextRequest(reuseUpstream: Bool)
    /// Stop reading from the client and write `reason`'s answer (if any),
    /// then close once the output is written.
    case answerAndClose(CloseReason)
    /// Close now (whatever is queued is dropped).
    case close(CloseReason)
    /// Close now, as `close` does, so that the client can tell its response
    /// was cut: a TCP reset, and on a TLS client connection no close_notify.
    /// Its response body was delimited by the close, so an ordinary close
    /// would look like the body's end (RFC 9112 §8).
    case reset(CloseReason)
}

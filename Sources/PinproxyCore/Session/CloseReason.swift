/// Why a client connection ended, and when: the one value every end of a
/// session goes through (relayd's `relay_close(con, msg)`; HAProxy's
/// termination state, an `SF_ERR_*` cause × an `SF_FINST_*` phase).
///
/// `CloseReason+Answer` is the one table from a reason to what the client is
/// told (status, `Proxy-Status` error and details, a sentence) and how loudly
/// it is logged; nothing else spells a `Proxy-Status` token.
public struct CloseReason: Sendable, Hashable, CustomStringConvertible {
    /// What ended the connection.
    public enum Cause: Sendable, Hashable {
        /// The connection ended as HTTP says it may: the client closed between
        /// requests, a message asked to close, or pinproxy is draining.
        case completed
        /// The client went away (close or reset) with an exchange unfinished.
        case clientClosed
        /// The client sent nothing for `timeouts.idle`, or never began a head
        /// (`timeouts.request_header` from accept), or stopped reading.
        case clientTimedOut
        /// A head was begun but not finished within `timeouts.request_header` (408).
        case requestHeadTimedOut
        /// The request is invalid or ambiguous, or asks for what pinproxy does
        /// not do (RFC 9112: 400, 405, 414, 431, 501).
        case invalidRequest(HTTPError)
        /// A TRACE or OPTIONS with `Max-Forwards: 0` (RFC 9110 §7.6.2):
        /// pinproxy is its final recipient, forwards nothing and answers `200`
        /// itself; `reflected` is what a TRACE answer carries (empty for OPTIONS).
        case finalRecipient(method: String, reflected: [UInt8])
        /// `default_policy: "deny"` covers the host (403).
        case requestDenied(HostName)
        /// The request is addressed to one of pinproxy's own listeners (508).
        case proxyLoop
        /// `limits.max_connections` was reached when the client connected (503).
        case connectionLimit
        /// pinproxy is shutting down and accepts no new work (503).
        case shuttingDown
        /// The upstream's name did not resolve.
        case dnsFailed(Endpoint, detail: String)
        /// Every address of the upstream refused the connection.
        case connectionRefused(Endpoint, detail: String)
        /// Connecting or the TLS handshake took longer than its timeout.
        case connectTimedOut(Endpoint, detail: String)
        /// The TLS handshake or connection failed for a reason other than the policy.
        case tlsFailed(Endpoint, detail: String)
        /// The trust policy blocked the upstream inside the handshake.
        case trustBlocked(Endpoint, ViolationReason)
        /// The upstream connection ended before its response began, and how
        /// (a close, or a socket failure in the system's words; a TLS failure
        /// and the timeout are `tlsFailed` and `upstreamTimedOut`).
        case upstreamClosed(Endpoint, how: UpstreamEnd.Cause)
        /// The upstream sent nothing for `timeouts.idle` after the request.
        case upstreamTimedOut(Endpoint)
        /// The upstream's response is invalid or ambiguous (RFC 9112).
        case invalidResponse(Endpoint, reason: String)
        /// The upstream ended in the middle of a response already under way,
        /// and how: a TLS failure there (a record that does not decrypt, say)
        /// is logged in OpenSSL's words, as one before the response is.
        case upstreamEndedMidResponse(Endpoint, how: UpstreamEnd.Cause)
        /// The upstream's TLS connection ended without close_notify inside a
        /// body delimited by the close: an incomplete close (RFC 9112 §9.8),
        /// what a truncation attack forges, so the body is taken as cut.
        case upstreamTruncatedResponse(Endpoint)
        /// A CONNECT to a port not in `connect_ports` (SPEC §3.1: 403).
        case connectPortDenied(Endpoint)
        /// A CONNECT to a listed host without `interception` configured: pinned
        /// traffic is never tunnelled blind (403).
        case interceptionNotConfigured(HostName)
        /// A CONNECT to a listed host the interception CA's name constraints do
        /// not cover (a reload added it): 403 until the CA is issued again.
        case interceptionNotCovered(HostName)
        /// A CONNECT to an unlisted host whose `default_policy` is a policy
        /// object: a blind tunnel cannot enforce it (403).
        case tunnelCannotEnforce(HostName)
        /// A request inside an intercepted tunnel names another host than the
        /// tunnel's (RFC 9110 §15.5.20: 421).
        case misdirected(HostName)
        /// The client's TLS handshake inside an intercepted tunnel failed
        /// (its SNI did not name the CONNECT host, it timed out, …).
        case clientTLSFailed(HostName, detail: String)
    }

    /// Where in the life of the connection it ended.
    public enum Phase: String, Sendable, Hashable {
        /// Between requests, or before the first byte.
        case idle
        /// Receiving a request head.
        case requestHead
        /// Resolving, connecting and handshaking upstream (with the trust verdict).
        case connect
        /// The request is upstream (its body may still be flowing); no response head yet.
        case response
        /// Relaying a response body.
        case responseBody
        /// The client's TLS handshake inside an intercepted CONNECT.
        case clientHandshake
        /// Relaying a blind CONNECT tunnel.
        case tunnel
    }

    public var cause: Cause
    public var phase: Phase

    public init(_ cause: Cause, in phase: Phase) {
        self.cause = cause
        self.phase = phase
    }

    public var description: String { "\(phase.rawValue): \(logMessage)" }
}

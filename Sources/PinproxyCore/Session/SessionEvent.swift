/// What happened on a client connection, as its executor (`ClientSession`)
/// reports it to the `SessionMachine`: parser results, upstream outcomes,
/// body progress, ends and timeouts. No event carries a pointer or a socket.
public enum SessionEvent: Sendable {
    /// What the request-head parser made of the client's buffered bytes
    /// (`buffered` of them), under the rules of the current generation;
    /// `draining` when pinproxy is shutting down (the exchange may finish,
    /// the connection may not serve another).
    case requestHead(HeadParseResult<HTTPRequestHead>, buffered: Int, rules: RequestRules, draining: Bool)
    /// An upstream connection verified under the exchange's policy is
    /// attached; `pooled` when it came from the pool (its server may have
    /// closed it meanwhile); `reported` when report-only mode let a failing
    /// server through.
    case upstreamReady(pooled: Bool, reported: Bool)
    /// No verified upstream connection could be made.
    case upstreamFailed(UpstreamFailureKind)
    /// The violation event of a blocked upstream is durable on disk: the 502 may leave (SPEC §4).
    case violationRecorded
    /// The request body pump moved what it could.
    case requestBody(BodyProgress)
    /// What the response-head parser made of the upstream's buffered bytes.
    case responseHead(HeadParseResult<HTTPResponseHead>)
    /// The response body pump moved what it could.
    case responseBody(BodyProgress)
    /// The client half-closed: `buffered` bytes are still unread.
    case clientEnded(buffered: Int)
    /// The client's read timeout ran out (idle, or the request-header deadline).
    case clientTimedOut(buffered: Int)
    /// The client connection failed (reset, write error, write timeout).
    case clientFailed
    /// The upstream connection ended, failed or timed out during the exchange.
    case upstreamEnded(UpstreamEnd)
    /// A blind tunnel's TCP connection to its target is up.
    case tunnelOpened
    /// A blind tunnel ended: both directions closed, a socket failed, or
    /// (`idle`) nothing moved for `timeouts.tunnel_idle`.
    case tunnelClosed(idle: Bool)
    /// The client's TLS handshake inside an intercepted CONNECT completed.
    case clientTLSReady
    /// The client's TLS handshake failed (OpenSSL's words, or why pinproxy refused it).
    case clientTLSFailed(String)
    /// Shutdown: close the connection if it is between requests (no byte of
    /// a next head among the `buffered` ones); an exchange under way finishes.
    case drain(buffered: Int)
}

/// How a body pump's turn ended.
public enum BodyProgress: Sendable, Hashable {
    /// Waiting for more bytes from the source.
    case needMore
    /// The body is complete; bytes after it belong to the next message.
    case complete
    case invalid(HTTPError)
}

/// Why no verified upstream connection could be made (SPEC §3 statuses).
public enum UpstreamFailureKind: Sendable, Hashable {
    case dns(String)
    case refused(String)
    case timedOut(String)
    case tls(String)
    /// The trust policy blocked the server inside the handshake; nothing was relayed.
    case blocked(ViolationReason)
}

/// How an attached upstream connection ended.
public struct UpstreamEnd: Sendable, Hashable {
    /// What ended it: exactly one of these, so no combination of flags can
    /// say two things at once.
    public enum Cause: Sendable, Hashable {
        /// The upstream closed its side with close_notify: nothing was cut.
        case closeNotify
        /// The TLS connection ended without close_notify, by an EOF or a
        /// reset beneath TLS: an incomplete close (RFC 9112 §9.8). A body
        /// delimited by the close is then cut (RFC 9112 §8).
        case incompleteClose
        /// A read or write on the socket failed, in the system's words.
        case socketFailed(String)
        /// The TLS connection failed, in OpenSSL's words.
        case tlsFailed(String)
        /// The read or write timeout (`timeouts.idle`) ran out.
        case timedOut
    }

    public var cause: Cause
    /// Response bytes the upstream sent that are still unread.
    public var buffered: Int

    public init(_ cause: Cause, buffered: Int) {
        self.cause = cause
        self.buffered = buffered
    }
}

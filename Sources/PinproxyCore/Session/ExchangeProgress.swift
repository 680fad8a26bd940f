/// One request and its response inside a `SessionMachine`, from the parsed
/// request head to the last body byte.
public struct ExchangeProgress: Sendable, Hashable {
    /// Where the exchange's upstream connection stands.
    public enum Upstream: Sendable, Hashable {
        /// Being taken from the pool or made (DNS, TCP, TLS and the verdict).
        case acquiring
        /// The policy blocked the server; the answer waits for the durable violation event.
        case blocked(ViolationReason)
        /// Verified and in use; `pooled` when it came from the pool.
        case attached(pooled: Bool)
    }

    /// What a CONNECT exchange sets up; nil for an ordinary request.
    public enum Connect: Sendable, Hashable {
        /// The upstream is verified first; then the client's TLS is terminated.
        case intercept
        /// A blind TCP tunnel to the target.
        case tunnel
    }

    public let request: HTTPRequestHead
    public let routed: RoutedRequest
    public let connect: Connect?
    /// The matched `hosts` key, or `default_policy`.
    public let rule: String
    public internal(set) var upstream = Upstream.acquiring
    /// Whether the client connection may serve another request afterwards
    /// (RFC 9112 §9.3); narrowed by the response.
    public internal(set) var clientKeepAlive: Bool
    public internal(set) var requestComplete: Bool
    /// Any response byte (interim or final) has been written to the client.
    public internal(set) var responseStarted = false
    /// The final response head has been written; its body is being relayed.
    public internal(set) var responseHeadSent = false
    /// The final response's status, once its head is sent.
    public internal(set) var responseStatus: Int?
    public internal(set) var responseComplete = false
    /// The upstream may keep the connection for another exchange (its final
    /// head allows it and the body is not delimited by close).
    public internal(set) var upstreamKeepsAlive = false
    /// The response body ends when the upstream closes (RFC 9112 §6.3 rule 8).
    public internal(set) var responseDelimitedByClose = false
    /// The body reaches the client delimited by the close: the upstream's
    /// was, or it was chunked and the client speaks HTTP/1.0, which gets the
    /// chunk data only. Such a client can tell a cut body from a whole one
    /// only by how the connection ends.
    public internal(set) var clientBodyEndsAtClose = false

    init(request: HTTPRequestHead, routed: RoutedRequest, rule: String, clientKeepAlive: Bool, connect: Connect? = nil) {
        self.request = request
        self.routed = routed
        self.connect = connect
        self.rule = rule
        self.clientKeepAlive = clientKeepAlive
        requestComplete = request.bodyFraming.isEmpty
    }

    /// An ordinary request, complete, with which the client itself ends its
    /// connection (`Connection: close`, or HTTP/1.0 without keep-alive): such
    /// a client must send nothing more (RFC 9112 §9.6), so the exchange needs
    /// no further byte from it. Not when only pinproxy ends the connection
    /// (a drain, a response that closes): that client may have pipelined
    /// more, which must still be read, or the close would reset the
    /// connection under the answer.
    public var needsNoMoreClientInput: Bool { connect == nil && requestComplete && !request.wantsKeepAlive }

    /// RFC 9110 §9.2.2 idempotent methods, without a body, that nothing came
    /// back for: safe to send again on a fresh connection when a pooled one
    /// turns out to be closed (RFC 9112 §9.3.1). A fresh connection is never
    /// retried (`upstreamEnded` asks only of pooled ones).
    public var isRetriable: Bool {
        !responseStarted && request.bodyFraming == .none &&
            ["GET", "HEAD", "OPTIONS", "DELETE", "PUT", "TRACE"].contains(request.method)
    }

    /// The head sent upstream for this request (`UpstreamRequestWriter`),
    /// written into `buffer` (empty; from `HeadBuffers`).
    func upstreamRequestHead(into buffer: consuming [UInt8]) -> [UInt8] {
        UpstreamRequestWriter.serialise(request, routed: routed, into: consume buffer)
    }
}

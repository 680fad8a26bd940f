/// The `Proxy-Status` error types pinproxy sends (RFC 9209 §2.3), spelled
/// here and nowhere else; `CloseReason+Answer` decides which one a failure gets.
public enum ProxyStatusError: String, Sendable, Hashable, CaseIterable {
    case dnsError = "dns_error"
    case connectionRefused = "connection_refused"
    case connectionTimeout = "connection_timeout"
    case connectionTerminated = "connection_terminated"
    case connectionLimitReached = "connection_limit_reached"
    case tlsProtocolError = "tls_protocol_error"
    case tlsCertificateError = "tls_certificate_error"
    case httpProtocolError = "http_protocol_error"
    case httpRequestDenied = "http_request_denied"
    /// A 4xx pinproxy writes itself, on the origin's behalf (a refused
    /// request, a request head that timed out): RFC 9209 §2.3.16 has it tell
    /// an intermediary's client error from the origin's.
    case httpRequestError = "http_request_error"
    case httpResponseTimeout = "http_response_timeout"
    case proxyLoopDetected = "proxy_loop_detected"
    /// An answer pinproxy made without trying the next hop that is neither a
    /// client error nor one of the failures above (shutting down; a transfer
    /// coding it does not relay, 501): RFC 9209 §2.3.29.
    case proxyInternalResponse = "proxy_internal_response"
}

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
    case httpResponseTimeout = "http_response_timeout"
    case proxyLoopDetected = "proxy_loop_detected"
}

/// An answer pinproxy writes itself (SPEC §3): status, a `Proxy-Status` field
/// (RFC 9209), and one short human sentence as a text body.
///
/// `Proxy-Status: pinproxy; error=<token>[; details="<quoted>"]`, where the
/// token is one of RFC 9209 §2.3's error types; client parse errors have no
/// such type, so they get only the status and the text.
public struct ProxyErrorResponse: Sendable, Hashable {
    public var status: Int
    public var proxyStatusError: String?
    public var details: String?
    public var message: String
    public var closeConnection: Bool

    public init(status: Int, proxyStatusError: String?, details: String? = nil, message: String,
                closeConnection: Bool = true) {
        self.status = status
        self.proxyStatusError = proxyStatusError
        self.details = details
        self.message = message
        self.closeConnection = closeConnection
    }

    public func serialise() -> [UInt8] {
        let body = Array((message + "\n").utf8)
        var writer = HeadWriter()
        writer.line("HTTP/1.1 \(status) \(HTTPStatusReason.phrase(for: status))")
        if proxyStatusError != nil || details != nil {
            var value = "pinproxy"
            if let proxyStatusError { value += "; error=\(proxyStatusError)" }
            if let details { value += "; details=\(Self.quoted(details))" }
            writer.field("Proxy-Status", value)
        }
        writer.field("Content-Type", "text/plain; charset=utf-8")
        writer.field("Content-Length", String(body.count))
        if closeConnection { writer.field("Connection", "close") }
        return writer.finish() + body
    }

    /// The answer to a refused request or an invalid upstream response.
    public static func forParseError(_ error: HTTPError) -> ProxyErrorResponse {
        switch error.status {
        case 405:
            return ProxyErrorResponse(status: 405, proxyStatusError: nil, message:
                "pinproxy does not tunnel: send plain http:// URLs through the proxy; it opens TLS upstream itself.")
        case 414:
            return ProxyErrorResponse(status: 414, proxyStatusError: nil, message:
                "The request target is longer than pinproxy accepts.")
        case 431:
            return ProxyErrorResponse(status: 431, proxyStatusError: nil, message:
                "The request header section is larger than pinproxy accepts.")
        case 501:
            return ProxyErrorResponse(status: 501, proxyStatusError: nil, message:
                "pinproxy only accepts the chunked transfer coding: \(error.reason).")
        case 502:
            return ProxyErrorResponse(status: 502, proxyStatusError: "http_protocol_error", details: error.reason,
                                      message: "The upstream server sent an invalid or ambiguous response.")
        default:
            return ProxyErrorResponse(status: error.status, proxyStatusError: nil, message:
                "pinproxy refused a malformed or ambiguous request: \(error.reason).")
        }
    }

    /// An RFC 8941 §3.3.3 sf-string: backslash and quote escaped, bytes outside
    /// printable ASCII replaced by "?" (they cannot be represented).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": result += "\\" + String(scalar)
            case " "..."~": result.unicodeScalars.append(scalar)
            default: result += "?"
            }
        }
        return result + "\""
    }
}

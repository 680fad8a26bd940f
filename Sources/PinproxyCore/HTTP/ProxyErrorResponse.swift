/// An answer pinproxy writes itself (SPEC §3): status, a `Proxy-Status` field
/// (RFC 9209), and one short human sentence as a text body. Which answer a
/// failure gets is decided in one place, `CloseReason.answer`.
///
/// `Proxy-Status: pinproxy; error=<token>[; details="<quoted>"]`, where the
/// token is one of RFC 9209 §2.3's error types. Every such answer has one
/// (SPEC §3): a client reading a 400 or a 503 can tell pinproxy's from the
/// origin's.
public struct ProxyErrorResponse: Sendable, Hashable {
    public var status: Int
    public var proxyStatusError: ProxyStatusError
    public var details: String?
    public var message: String
    public var closeConnection: Bool

    public init(status: Int, proxyStatusError: ProxyStatusError, details: String? = nil, message: String,
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
        var proxyStatus = "pinproxy; error=\(proxyStatusError.rawValue)"
        if let details { proxyStatus += "; details=\(Self.quoted(details))" }
        writer.field("Proxy-Status", proxyStatus)
        writer.field("Content-Type", "text/plain; charset=utf-8")
        writer.field("Content-Length", String(body.count))
        if closeConnection { writer.field("Connection", "close") }
        return writer.finish() + body
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

/// An answer pinproxy writes itself (SPEC §3): status, a `Proxy-Status` field
/// (RFC 9209), and a short body. Which answer an end gets is decided in one
/// place, `CloseReason.answer`.
///
/// A refusal or failure says `Proxy-Status: pinproxy; error=<token>[; details="<quoted>"]`,
/// where the token is one of RFC 9209 §2.3's error types, and one human
/// sentence as a text body. Every such answer has one (SPEC §3): a client
/// reading a 400 or a 503 can tell pinproxy's from the origin's. An answer
/// that is no error (pinproxy as the final recipient of a TRACE or OPTIONS,
/// RFC 9110 §7.6.2) says only `Proxy-Status: pinproxy`, and carries its own
/// content.
public struct ProxyAnswer: Sendable, Hashable {
    /// What follows the head.
    public enum Body: Sendable, Hashable {
        /// One human sentence, sent as `text/plain`.
        case sentence(String)
        /// Content of its own, with its type (none for empty content).
        case content([UInt8], type: String?)
    }

    public var status: Int
    /// nil for an answer that reports no error.
    public var proxyStatusError: ProxyStatusError?
    public var details: String?
    public var body: Body
    public var closeConnection: Bool

    public init(status: Int, proxyStatusError: ProxyStatusError?, details: String? = nil, message: String,
                closeConnection: Bool = true) {
        self.init(status: status, proxyStatusError: proxyStatusError, details: details, body: .sentence(message),
                  closeConnection: closeConnection)
    }

    private init(status: Int, proxyStatusError: ProxyStatusError?, details: String?, body: Body, closeConnection: Bool) {
        self.status = status
        self.proxyStatusError = proxyStatusError
        self.details = details
        self.body = body
        self.closeConnection = closeConnection
    }

    /// pinproxy's `200` as the final recipient of a request: no error, and
    /// `content` (of `contentType`) in place of a sentence.
    public static func finalRecipient(content: [UInt8], contentType: String?) -> ProxyAnswer {
        ProxyAnswer(status: 200, proxyStatusError: nil, details: nil, body: .content(content, type: contentType),
                    closeConnection: true)
    }

    public func serialise() -> [UInt8] {
        let bytes: [UInt8]
        let contentType: String?
        switch body {
        case let .sentence(message): (bytes, contentType) = (Array((message + "\n").utf8), "text/plain; charset=utf-8")
        case let .content(content, type): (bytes, contentType) = (content, type)
        }
        var writer = HeadWriter()
        writer.line("HTTP/1.1 \(status) \(HTTPStatusReason.phrase(for: status))")
        var proxyStatus = "pinproxy"
        if let proxyStatusError { proxyStatus += "; error=\(proxyStatusError.rawValue)" }
        if let details { proxyStatus += "; details=\(Self.quoted(details))" }
        writer.field("Proxy-Status", proxyStatus)
        if let contentType { writer.field("Content-Type", contentType) }
        writer.field("Content-Length", String(bytes.count))
        if closeConnection { writer.field("Connection", "close") }
        return writer.finish() + bytes
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

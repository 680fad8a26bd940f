import PinproxyCore

/// The `HOST[:PORT]` argument of `pins` and `probe`: a host name or IP
/// literal (IPv6 in brackets, RFC 3986 §3.2.2), port 443 when omitted.
struct HostArgument {
    var host: HostName
    var port: UInt16

    init(_ text: String) throws(Invocation.UsageError) {
        var hostText = Substring(text)
        var portText: Substring?
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            hostText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") { portText = rest.dropFirst() } else if !rest.isEmpty { hostText = "" }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let host = HostName(String(hostText)) else {
            throw Invocation.UsageError(description: "\(text): expected HOST[:PORT], e.g. api.example.com:443 or [::1]:8443")
        }
        let port = portText.map { UInt16($0) } ?? 443
        guard let port, port > 0 else {
            throw Invocation.UsageError(description: "\(text): the port must be a number from 1 to 65535")
        }
        self.host = host
        self.port = port
    }

    var endpoint: Endpoint { Endpoint(host: host, port: port) }
}

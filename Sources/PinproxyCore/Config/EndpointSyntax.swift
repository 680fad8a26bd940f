/// Parses the `host:port` strings of `listen`, `upstream` and `resolve`.
///
/// IPv6 literals must be bracketed (`[::1]:8080`, RFC 3986 §3.2.2), otherwise
/// the port could not be told from the address. Failures are messages that
/// quote the input, for the caller to attach to a JSON path.
enum EndpointSyntax {
    /// The endpoint in `text`; `defaultPort` is used when the port is omitted,
    /// and when it is nil a port is required.
    static func parse(_ text: String, defaultPort: UInt16?) -> Result<Endpoint, EndpointSyntaxError> {
        var hostText = Substring(text)
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                return .failure(EndpointSyntaxError(message: "\"\(text)\" has '[' without ']'"))
            }
            hostText = text[...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else {
                    return .failure(EndpointSyntaxError(message: "\"\(text)\": expected ':port' after ']'"))
                }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else {
                return .failure(EndpointSyntaxError(message: "\"\(text)\": an IPv6 address needs brackets, e.g. \"[::1]:8080\""))
            }
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let host = HostName(String(hostText)) else {
            return .failure(EndpointSyntaxError(message: "\"\(text)\": \"\(hostText)\" is not a host name or IP address"))
        }
        guard let portText else {
            guard let defaultPort else {
                return .failure(EndpointSyntaxError(message: "\"\(text)\" has no port; write host:port"))
            }
            return .success(Endpoint(host: host, port: defaultPort))
        }
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText), port > 0 else {
            return .failure(EndpointSyntaxError(message: "\"\(text)\": port \"\(portText)\" is not a number in 1…65535"))
        }
        return .success(Endpoint(host: host, port: port))
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1, or `localhost`),
    /// i.e. reachable only from this machine.
    static func isLoopback(_ host: HostName) -> Bool {
        host.value == "localhost" || host.value == "::1" || host.value == "0:0:0:0:0:0:0:1"
            || (!host.isIPv6 && host.isIPAddress && host.value.hasPrefix("127."))
    }
}

/// Why an endpoint string was refused; the message quotes the input.
struct EndpointSyntaxError: Error, Sendable, Hashable {
    var message: String
}

/// Parses `host [ ":" port ]` from a target URI or a `Host` field
/// (RFC 3986 §3.2.2–§3.2.3, RFC 9110 §7.2) into an upstream endpoint.
///
/// pinproxy's port rule (SPEC §3): the upstream is always TLS, so port 80 or
/// no port means 443 and any other port is kept. Userinfo is refused: it has
/// no meaning for an HTTP proxy and is a classic way to disguise a host.
enum RequestAuthority {
    static func endpoint(_ authority: Substring) -> Result<Endpoint, HTTPError> {
        parse(authority, port: upstreamPort)
    }

    /// A CONNECT target (RFC 9112 §3.2.3 authority-form, `host:port`): the
    /// port is required and kept as written (no 80 → 443 rule: a tunnel goes
    /// where it says, and `connect_ports` decides whether it may).
    static func connectEndpoint(_ authority: Substring) -> Result<Endpoint, HTTPError> {
        parse(authority) { text in
            guard let text, !text.isEmpty, text.utf8.count <= 5, let number = FramingFields.decimal(text),
                  (1...65535).contains(number) else { return nil }
            return UInt16(number)
        }
    }

    private static func parse(_ authority: Substring, port portRule: (Substring?) -> UInt16?) -> Result<Endpoint, HTTPError> {
        if HTTPSyntax.contains(UInt8(ascii: "@"), in: authority) { return .failure(.badRequest("userinfo in authority")) }
        guard !authority.isEmpty else { return .failure(.badRequest("empty host")) }

        // Byte-wise (every request has a Host field): Character-wise search
        // would run grapheme breaking over ASCII.
        let bytes = authority.utf8
        let hostText: Substring
        let portText: Substring?
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return .failure(.badRequest("invalid host")) }
            let afterClose = bytes.index(after: close)
            hostText = authority[..<afterClose]
            if afterClose == bytes.endIndex {
                portText = nil
            } else {
                guard bytes[afterClose] == UInt8(ascii: ":") else { return .failure(.badRequest("invalid host")) }
                portText = authority[bytes.index(after: afterClose)...]
            }
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            hostText = authority[..<colon]
            portText = authority[bytes.index(after: colon)...]
        } else {
            hostText = authority
            portText = nil
        }
        guard !hostText.isEmpty else { return .failure(.badRequest("empty host")) }
        guard let host = HostName(String(hostText)) else { return .failure(.badRequest("invalid host")) }
        // An unbracketed IPv6 literal cannot have reached here (its colon splits it), and
        // a bracketed name that is not IPv6 was refused by HostName.
        guard let port = portRule(portText) else { return .failure(.badRequest("invalid port")) }
        return .success(Endpoint(host: host, port: port))
    }

    /// RFC 3986 §3.2.3 `port = *DIGIT`; empty means the default. Returns the
    /// upstream port after the 80/none → 443 rule, nil when out of range.
    private static func upstreamPort(_ text: Substring?) -> UInt16? {
        guard let text, !text.isEmpty else { return 443 }
        guard text.utf8.count <= 5, let number = FramingFields.decimal(text),
              (1...65535).contains(number) else { return nil }
        return number == 80 ? 443 : UInt16(number)
    }
}

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

    /// The same for a `Host` value still in its received bytes. Bytes that
    /// are not UTF-8 are never one of the separators, and make the host
    /// invalid as they would in a String view (decoded with replacement characters).
    static func endpoint(bytes authority: UnsafeRawBufferPointer) -> Result<Endpoint, HTTPError> {
        parse(authority, port: upstreamPort)
    }

    /// A CONNECT target (RFC 9112 §3.2.3 authority-form, `host:port`): the
    /// port is required and kept as written (no 80 → 443 rule: a tunnel goes
    /// where it says, and `connect_ports` decides whether it may).
    static func connectEndpoint(_ authority: Substring) -> Result<Endpoint, HTTPError> {
        parse(authority) { text in
            guard let text, !text.isEmpty, text.count <= 5, let number = HTTPSyntax.decimal(text),
                  (1...65535).contains(number) else { return nil }
            return UInt16(number)
        }
    }

    /// Splits `authority` over its contiguous UTF-8 (every request has a Host
    /// field: Substring index arithmetic cost some 2,000 instructions a request).
    private static func parse(_ authority: Substring,
                              port portRule: (UnsafeRawBufferPointer?) -> UInt16?) -> Result<Endpoint, HTTPError> {
        if let result = authority.utf8.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0), port: portRule) }) {
            return result
        }
        return Array(authority.utf8).withUnsafeBytes { parse($0, port: portRule) }
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer,
                              port portRule: (UnsafeRawBufferPointer?) -> UInt16?) -> Result<Endpoint, HTTPError> {
        if bytes.contains(UInt8(ascii: "@")) { return .failure(.badRequest("userinfo in authority")) }
        guard !bytes.isEmpty else { return .failure(.badRequest("empty host")) }

        let hostEnd: Int
        let portStart: Int?
        if bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return .failure(.badRequest("invalid host")) }
            hostEnd = close + 1
            if hostEnd == bytes.count {
                portStart = nil
            } else {
                guard bytes[hostEnd] == UInt8(ascii: ":") else { return .failure(.badRequest("invalid host")) }
                portStart = hostEnd + 1
            }
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            hostEnd = colon
            portStart = colon + 1
        } else {
            hostEnd = bytes.count
            portStart = nil
        }
        guard hostEnd > 0 else { return .failure(.badRequest("empty host")) }
        // Cut at ASCII bytes: the bytes of a String decode to the same text.
        guard let host = HostName(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<hostEnd]), as: UTF8.self)) else {
            return .failure(.badRequest("invalid host"))
        }
        // An unbracketed IPv6 literal cannot have reached here (its colon splits it), and
        // a bracketed name that is not IPv6 was refused by HostName.
        guard let port = portRule(portStart.map { UnsafeRawBufferPointer(rebasing: bytes[$0...]) }) else {
            return .failure(.badRequest("invalid port"))
        }
        return .success(Endpoint(host: host, port: port))
    }

    /// RFC 3986 §3.2.3 `port = *DIGIT`; empty means the default. Returns the
    /// upstream port after the 80/none → 443 rule, nil when out of range.
    private static func upstreamPort(_ text: UnsafeRawBufferPointer?) -> UInt16? {
        guard let text, !text.isEmpty else { return 443 }
        guard text.count <= 5, let number = HTTPSyntax.decimal(text),
              (1...65535).contains(number) else { return nil }
        return number == 80 ? 443 : UInt16(number)
    }
}

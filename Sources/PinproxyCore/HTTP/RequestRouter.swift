/// Where a request goes (SPEC §3).
///
/// Forward listener: absolute-form `http://host[:port]/path?q` → that host
/// (80 or no port → 443, other ports kept), `https://` accepted too, and the
/// URI's authority wins over a differing `Host` (RFC 9112 §3.2.2); origin-form
/// uses the `Host` field with the same port rule. Gateway listener: always the
/// fixed upstream, keeping the origin-form target (or only the path of an
/// absolute-form one). Both refuse CONNECT (405), asterisk-form for any method
/// but OPTIONS, a missing `Host` in HTTP/1.1 and more than one `Host` field
/// (RFC 9112 §3.2: 400). A server-wide OPTIONS goes upstream as `OPTIONS *`,
/// whether it came so or as an absolute-form URI with an empty path and no
/// query (RFC 9112 §3.2.4: the last proxy sends "*").
public enum RequestRouter {
    public static func routeForward(_ head: HTTPRequestHead) -> Result<RoutedRequest, HTTPError> {
        var memo = HostFieldMemo()
        return routeForward(head, hostMemo: &memo)
    }

    /// The same, reusing the endpoint of a `Host` value equal to the one `hostMemo` remembers.
    static func routeForward(_ head: HTTPRequestHead, hostMemo: inout HostFieldMemo) -> Result<RoutedRequest, HTTPError> {
        let host: Endpoint?
        switch validatedHost(head, memo: &hostMemo) {
        case .failure(let error): return .failure(error)
        case .success(let endpoint): host = endpoint
        }
        if head.target.utf8.first == UInt8(ascii: "/") {
            guard let host else { return .failure(.badRequest("missing host")) }
            return originForm(head.target).map { RoutedRequest(upstream: host, originFormTarget: $0) }
        }
        if head.target == serverWide {
            guard let host else { return .failure(.badRequest("missing host")) }
            return .success(RoutedRequest(upstream: host, originFormTarget: serverWide))
        }
        return absoluteForm(head.target, method: head.method, memo: &hostMemo)
            .map { RoutedRequest(upstream: $0.authority, originFormTarget: $0.target) }
    }

    /// A CONNECT on a forward listener (RFC 9110 §9.3.6): where the tunnel
    /// goes. The target is authority-form with a port; a CONNECT carries no
    /// content, so one that declares a body is refused (its bytes could not
    /// be told from the tunnel's).
    public static func routeConnect(_ head: HTTPRequestHead) -> Result<Endpoint, HTTPError> {
        guard head.bodyFraming.isEmpty else {
            return .failure(.badRequest("connect with a body"))
        }
        return RequestAuthority.connectEndpoint(Substring(head.target))
    }

    public static func routeGateway(_ head: HTTPRequestHead, upstream: Endpoint) -> Result<RoutedRequest, HTTPError> {
        var memo = HostFieldMemo()
        return routeGateway(head, upstream: upstream, hostMemo: &memo)
    }

    /// The same, reusing the check of a `Host` value equal to the one `hostMemo` remembers.
    static func routeGateway(_ head: HTTPRequestHead, upstream: Endpoint,
                             hostMemo: inout HostFieldMemo) -> Result<RoutedRequest, HTTPError> {
        if case .failure(let error) = validatedHost(head, memo: &hostMemo) { return .failure(error) }
        if head.target.utf8.first == UInt8(ascii: "/") {
            return originForm(head.target).map { RoutedRequest(upstream: upstream, originFormTarget: $0) }
        }
        if head.target == serverWide { return .success(RoutedRequest(upstream: upstream, originFormTarget: serverWide)) }
        return absoluteForm(head.target, method: head.method, memo: &hostMemo)
            .map { RoutedRequest(upstream: upstream, originFormTarget: $0.target) }
    }

    /// Checks shared by both listener kinds; the `Host` field as an endpoint when present.
    private static func validatedHost(_ head: HTTPRequestHead, memo: inout HostFieldMemo) -> Result<Endpoint?, HTTPError> {
        if head.method == "CONNECT" { return .failure(HTTPError(status: 405, reason: "connect is not supported")) }
        if head.target == serverWide && head.method != "OPTIONS" { return .failure(.badRequest("asterisk-form target")) }
        // The index, not `values(of:)`: no array for the one Host field of every request.
        guard let (index, repeated) = head.fieldSection.firstIndex(of: .host) else {
            return head.version == .http11 ? .failure(.badRequest("missing host")) : .success(nil)
        }
        if repeated { return .failure(.badRequest("more than one host field")) }
        return head.fieldSection.withValue(at: index) { memo.endpoint(for: $0, parse: RequestAuthority.endpoint(bytes:)) }
            .map { Optional($0) }
            .mapError { _ in .badRequest("invalid host field") }
    }

    /// `origin-form = absolute-path [ "?" query ]` (RFC 9112 §3.2.1).
    private static func originForm(_ target: String) -> Result<String, HTTPError> {
        HTTPSyntax.contains(UInt8(ascii: "#"), in: target) ? .failure(.badRequest("fragment in request target")) : .success(target)
    }

    /// `asterisk-form = "*"`: an OPTIONS for the server as a whole (RFC 9112 §3.2.4).
    private static var serverWide: String { "*" }

    /// `absolute-form = absolute-URI` (RFC 9112 §3.2.2) with scheme http or
    /// https; returns the authority's endpoint, through `memo` as a `Host`
    /// value's (a client names the same authority in both), and the
    /// origin-form rest ("*" for an OPTIONS with neither path nor query).
    /// Scanned over the target's bytes: it is visible ASCII
    /// (`RequestHeadParser`), where a byte is a character, and the generic
    /// `String` search and `Character` walk this replaced cost a forward
    /// proxy's request some 19,000 instructions.
    private static func absoluteForm(_ target: String, method: String, memo: inout HostFieldMemo)
        -> Result<(authority: Endpoint, target: String), HTTPError> {
        if let result = target.utf8.withContiguousStorageIfAvailable({ absoluteForm(bytes: $0, method: method, memo: &memo) }) {
            return result
        }
        return Array(target.utf8).withUnsafeBufferPointer { absoluteForm(bytes: $0, method: method, memo: &memo) }
    }

    private static func absoluteForm(bytes: UnsafeBufferPointer<UInt8>, method: String, memo: inout HostFieldMemo)
        -> Result<(authority: Endpoint, target: String), HTTPError> {
        guard !bytes.contains(UInt8(ascii: "#")) else { return .failure(.badRequest("fragment in request target")) }
        guard let separator = firstSchemeSeparator(in: bytes) else { return .failure(.badRequest("invalid request target")) }
        let scheme = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<separator]))
        guard HTTPSyntax.equalsIgnoringASCIICase(bytes: scheme, lowercase: "http")
            || HTTPSyntax.equalsIgnoringASCIICase(bytes: scheme, lowercase: "https") else {
            return .failure(.badRequest("unsupported scheme"))
        }
        let authorityStart = separator + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.endIndex
        let authority = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[authorityStart..<authorityEnd]))
        return memo.endpoint(for: authority, parse: RequestAuthority.endpoint(bytes:)).map { endpoint in
            let rest = UnsafeBufferPointer(rebasing: bytes[authorityEnd...])
            let path = rest.isEmpty ? (method == "OPTIONS" ? serverWide : "/")
                : rest[0] == UInt8(ascii: "?") ? "/" + String(decoding: rest, as: UTF8.self)
                : String(decoding: rest, as: UTF8.self)
            return (endpoint, path)
        }
    }

    /// Where the first `://` starts (the end of the scheme), as a search for
    /// that string would find it.
    private static func firstSchemeSeparator(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 3 else { return nil }
        for index in 0...(bytes.count - 3)
        where bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/") && bytes[index + 2] == UInt8(ascii: "/") {
            return index
        }
        return nil
    }
}

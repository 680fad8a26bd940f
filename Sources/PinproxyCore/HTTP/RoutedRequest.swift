/// Where a request goes and what it asks for there, once routing has decided.
///
/// `originFormTarget` starts with "/" (it is "/" when the request had an
/// empty path), or is "*" for a server-wide OPTIONS (RFC 9112 §3.2.4);
/// `pathWithoutQuery` is the same without `?query`, because the violation log
/// must never contain query strings (SPEC §4).
public struct RoutedRequest: Sendable, Hashable {
    public var upstream: Endpoint
    public var originFormTarget: String
    /// The `Max-Forwards` sent upstream in place of the received field
    /// (`MaxForwards`); nil relays the received field lines as they are.
    public var maxForwards: Int?
    /// Made when asked (for a violation event), not for every routed request.
    public var pathWithoutQuery: String {
        let utf8 = originFormTarget.utf8
        return String(originFormTarget[..<(utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex)])
    }

    public init(upstream: Endpoint, originFormTarget: String) {
        self.upstream = upstream
        self.originFormTarget = originFormTarget
    }
}

import Foundation
import Testing
@testable import PinproxyCore

/// The absolute-form target of a forward proxy's request (RFC 9112 §3.2.2),
/// scanned over its bytes, against a reference written the plain way: a
/// `String` search for `://` and a walk over `Character`s (what the router did
/// before it scanned bytes). Every target built from the parts below, through
/// a fresh `Host` memo and through one memo shared by all of them in turn.
@Suite("RequestRouter: absolute-form targets")
struct AbsoluteFormTests {
    static let schemes = ["http", "HTTP", "https", "HtTpS", "ftp", "", "http:", "xhttp", "h"]
    static let separators = ["://", ":/", "//", ":///", "://://"]
    static let authorities = [
        "a.example", "A.Example.COM", "a.example.", "a.example:", "a.example:80", "a.example:8443", "a.example:0",
        "a.example:65536", "a.example:8443x", "[::1]", "[::1]:8443", "[::1", "[::1]x", "127.0.0.1", "127.0.0.1:9443",
        "user@a.example", "", ":443", "a_b!.example", "xn--bcher-kva.example", "a..example",
    ]
    static let rests = ["", "/", "/p", "/p?q=1", "?q", "?", "/#frag", "#x", "/a//b", "/:x", "/a?b://c", "//x", "?/x"]

    static var targets: [String] {
        schemes.flatMap { scheme in
            separators.flatMap { separator in
                authorities.flatMap { authority in rests.map { scheme + separator + authority + $0 } }
            }
        }
    }

    /// Where the reference sends `target`, or its refusal, as text.
    static func reference(_ target: String) -> String {
        if target.contains("#") { return "400 fragment in request target" }
        guard let separator = target.range(of: "://") else { return "400 invalid request target" }
        let scheme = target[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return "400 unsupported scheme" }
        let afterScheme = target[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" } ?? afterScheme.endIndex
        let rest = afterScheme[authorityEnd...]
        let path = rest.isEmpty ? "/" : rest.hasPrefix("?") ? "/" + rest : String(rest)
        switch RequestAuthority.endpoint(afterScheme[..<authorityEnd]) {
        case let .success(endpoint): return "\(endpoint) \(path)"
        case let .failure(error): return "\(error.status) \(error.reason)"
        }
    }

    static func described(_ result: Result<RoutedRequest, HTTPError>) -> String {
        switch result {
        case let .success(routed): return "\(routed.upstream) \(routed.originFormTarget)"
        case let .failure(error): return "\(error.status) \(error.reason)"
        }
    }

    @Test("every target routes as the reference routes it, with a fresh memo and with one shared by all")
    func matchesTheReference() throws {
        var shared = HostFieldMemo()
        var compared = 0
        for target in Self.targets {
            // Targets starting with "/" are origin-form, another rule.
            guard !target.hasPrefix("/") else { continue }
            let head = try #require(HTTPTestSupport.requestHead("GET \(target) HTTP/1.1\r\nHost: a.example\r\n\r\n"), "\(target)")
            let expected = Self.reference(target)
            #expect(Self.described(RequestRouter.routeForward(head)) == expected, "\(target)")
            #expect(Self.described(RequestRouter.routeForward(head, hostMemo: &shared)) == expected, "\(target), shared memo")
            compared += 1
        }
        // The parts make 12,285 targets; none may be lost to the parser.
        #expect(compared == Self.targets.count - Self.targets.filter { $0.hasPrefix("/") }.count)
        #expect(compared > 12_000)
    }

    @Test("a gateway checks an absolute-form target the same way and keeps only its origin-form rest")
    func gatewayMatchesTheReference() throws {
        let upstream = Endpoint(host: try #require(HostName("api.example.com")), port: 443)
        var shared = HostFieldMemo()
        for target in Self.targets where !target.hasPrefix("/") {
            let head = try #require(HTTPTestSupport.requestHead("GET \(target) HTTP/1.1\r\nHost: a.example\r\n\r\n"))
            let reference = Self.reference(target)
            // The reference's endpoint is not the gateway's; its path and its refusals are.
            let expected = reference.hasPrefix("400 ") ? reference : "api.example.com:443 " + reference.split(separator: " ", maxSplits: 1)[1]
            #expect(Self.described(RequestRouter.routeGateway(head, upstream: upstream, hostMemo: &shared)) == expected, "\(target)")
        }
    }
}

import Testing
@testable import PinproxyCore

/// A request head and where routing must send it (or the status it must refuse with).
struct RouteCase: Sendable, CustomTestStringConvertible {
    var name: String
    var raw: String
    /// `host:port` of the upstream and the origin-form target; nil when refused.
    var upstream: String?
    var target: String?
    var status: Int?
    var testDescription: String { name }

    static func to(_ name: String, _ raw: String, _ upstream: String, _ target: String) -> RouteCase {
        RouteCase(name: name, raw: raw, upstream: upstream, target: target)
    }

    static func refused(_ name: String, _ raw: String, _ status: Int) -> RouteCase {
        RouteCase(name: name, raw: raw, status: status)
    }
}

@Suite("RequestRouter")
struct RequestRouterTests {
    static let forward: [RouteCase] = [
        .to("http without port goes to 443", "GET http://api.example.com/v1?x=1 HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
            "api.example.com:443", "/v1?x=1"),
        .to("http port 80 goes to 443", "GET http://api.example.com:80/ HTTP/1.1\r\nHost: api.example.com:80\r\n\r\n",
            "api.example.com:443", "/"),
        .to("port 8443 is kept", "GET http://api.example.com:8443/x HTTP/1.1\r\nHost: api.example.com:8443\r\n\r\n",
            "api.example.com:8443", "/x"),
        .to("https scheme accepted", "GET https://api.example.com/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
            "api.example.com:443", "/x"),
        .to("scheme and host are case-insensitive", "GET HTTP://API.Example.COM HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
            "api.example.com:443", "/"),
        .to("query without path", "GET http://a.example?q=1 HTTP/1.1\r\nHost: a.example\r\n\r\n", "a.example:443", "/?q=1"),
        .to("empty port means default", "GET http://a.example:/p HTTP/1.1\r\nHost: a.example\r\n\r\n", "a.example:443", "/p"),
        .to("IPv6 literal with port", "GET http://[::1]:8443/x HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n", "[::1]:8443", "/x"),
        .to("IPv4 literal", "GET http://127.0.0.1:9443/ HTTP/1.1\r\nHost: 127.0.0.1:9443\r\n\r\n", "127.0.0.1:9443", "/"),
        .to("differing Host: the authority wins", "GET http://api.example.com/x HTTP/1.1\r\nHost: evil.example\r\n\r\n",
            "api.example.com:443", "/x"),
        .to("HTTP/1.0 absolute-form without Host", "GET http://a.example/ HTTP/1.0\r\n\r\n", "a.example:443", "/"),
        .to("origin-form uses Host", "GET /v1 HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "api.example.com:443", "/v1"),
        .to("origin-form Host port 8443 kept", "GET /v1 HTTP/1.1\r\nHost: api.example.com:8443\r\n\r\n", "api.example.com:8443", "/v1"),
        .to("origin-form Host port 80 goes to 443", "GET /v1 HTTP/1.1\r\nHost: api.example.com:80\r\n\r\n", "api.example.com:443", "/v1"),
        .refused("userinfo", "GET http://user@api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400),
        .refused("other scheme", "GET ftp://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400),
        .refused("empty host", "GET http:///x HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("port 0", "GET http://a.example:0/ HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("port out of range", "GET http://a.example:65536/ HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("invalid host name", "GET http://a_b!.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("fragment", "GET http://a.example/#top HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("missing Host in HTTP/1.1 absolute-form", "GET http://a.example/ HTTP/1.1\r\n\r\n", 400),
        .refused("missing Host in HTTP/1.1 origin-form", "GET / HTTP/1.1\r\n\r\n", 400),
        .refused("HTTP/1.0 origin-form without Host", "GET / HTTP/1.0\r\n\r\n", 400),
        .refused("two Host fields", "GET / HTTP/1.1\r\nHost: a.example\r\nHost: a.example\r\n\r\n", 400),
        .refused("Host with userinfo", "GET / HTTP/1.1\r\nHost: u@a.example\r\n\r\n", 400),
        .refused("Host with bad port", "GET / HTTP/1.1\r\nHost: a.example:x\r\n\r\n", 400),
        .refused("empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400),
        // The Host value is split in its received bytes: the same answers as for a target's authority.
        .to("origin-form Host IPv6 with port", "GET / HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n", "[::1]:8443", "/"),
        .to("origin-form Host IPv6 without port", "GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", "[::1]:443", "/"),
        .to("origin-form Host with empty port", "GET / HTTP/1.1\r\nHost: a.example:\r\n\r\n", "a.example:443", "/"),
        .to("origin-form Host normalised", "GET / HTTP/1.1\r\nHost: A.Example.\r\n\r\n", "a.example:443", "/"),
        .refused("Host with only a port", "GET / HTTP/1.1\r\nHost: :443\r\n\r\n", 400),
        .refused("Host IPv6 followed by junk", "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", 400),
        .refused("Host IPv6 unclosed", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
        .refused("Host with a six-digit port", "GET / HTTP/1.1\r\nHost: a.example:000443\r\n\r\n", 400),
        .refused("Host with obs-text", "GET / HTTP/1.1\r\nHost: caf\u{E9}.example\r\n\r\n", 400),
        // RFC 9112 §3.2.4: asterisk-form is a server-wide OPTIONS, and only that.
        .to("OPTIONS * goes to the Host", "OPTIONS * HTTP/1.1\r\nHost: a.example:8443\r\n\r\n", "a.example:8443", "*"),
        .refused("OPTIONS * without Host", "OPTIONS * HTTP/1.0\r\n\r\n", 400),
        .refused("asterisk-form on GET", "GET * HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("asterisk-form on lower-case options", "options * HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .to("OPTIONS with neither path nor query is forwarded as *", "OPTIONS http://a.example HTTP/1.1\r\nHost: a.example\r\n\r\n",
            "a.example:443", "*"),
        .to("OPTIONS with a query keeps it", "OPTIONS http://a.example?q HTTP/1.1\r\nHost: a.example\r\n\r\n", "a.example:443", "/?q"),
        .to("OPTIONS with the path / keeps it", "OPTIONS http://a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n", "a.example:443", "/"),
        .refused("authority-form on GET", "GET a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", 400),
        .refused("CONNECT", "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n", 405),
    ]

    static let gateway: [RouteCase] = [
        .to("origin-form kept", "GET /v1?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n\r\n", "api.example.com:443", "/v1?x=1"),
        .to("absolute-form keeps only its path", "GET http://other.example:8080/p?q HTTP/1.1\r\nHost: other.example\r\n\r\n",
            "api.example.com:443", "/p?q"),
        .to("HTTP/1.0 without Host", "GET /x HTTP/1.0\r\n\r\n", "api.example.com:443", "/x"),
        .refused("missing Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 400),
        .refused("two Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        .refused("CONNECT", "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n", 405),
        .to("OPTIONS * goes to the upstream as *", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "api.example.com:443", "*"),
        .to("absolute-form OPTIONS without path becomes *", "OPTIONS http://a.example HTTP/1.1\r\nHost: a\r\n\r\n",
            "api.example.com:443", "*"),
        .refused("asterisk-form on POST", "POST * HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 400),
    ]

    private static func check(_ result: Result<RoutedRequest, HTTPError>, _ testCase: RouteCase) {
        switch result {
        case .success(let routed):
            #expect(routed.upstream.description == testCase.upstream)
            #expect(routed.originFormTarget == testCase.target)
        case .failure(let error):
            #expect(error.status == testCase.status, "\(error.reason)")
        }
    }

    @Test("forward listener routing follows SPEC §3", arguments: forward)
    func routesForward(_ testCase: RouteCase) throws {
        let head = try #require(HTTPTestSupport.requestHead(testCase.raw))
        Self.check(RequestRouter.routeForward(head), testCase)
    }

    @Test("gateway listener always goes to its upstream", arguments: gateway)
    func routesGateway(_ testCase: RouteCase) throws {
        let head = try #require(HTTPTestSupport.requestHead(testCase.raw))
        let upstream = Endpoint(host: try #require(HostName("api.example.com")), port: 443)
        Self.check(RequestRouter.routeGateway(head, upstream: upstream), testCase)
    }

    @Test("the logged path never contains the query")
    func pathWithoutQuery() throws {
        let head = try #require(HTTPTestSupport.requestHead("GET http://a.example/v1/users?token=secret HTTP/1.1\r\nHost: a.example\r\n\r\n"))
        let routed = try RequestRouter.routeForward(head).get()
        #expect(routed.pathWithoutQuery == "/v1/users")
        #expect(routed.originFormTarget == "/v1/users?token=secret")
    }
}

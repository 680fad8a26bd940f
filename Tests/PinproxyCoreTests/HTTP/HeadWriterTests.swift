import Testing
@testable import PinproxyCore

/// A response head relayed to a client, and the exact bytes the client must get.
struct ClientResponseCase: Sendable, CustomTestStringConvertible {
    var name: String
    var raw: String
    var method = "GET"
    var clientVersion: HTTPVersion
    var keepAlive: Bool
    var expected: String
    var testDescription: String { name }
}

@Suite("UpstreamRequestWriter and ClientResponseWriter")
struct HeadWriterTests {
    @Test("the upstream head drops hop-by-hop fields, replaces Host, normalises framing and appends Via")
    func upstreamRequest() throws {
        let raw = "POST http://api.example.com:8443/v1?x=1 HTTP/1.1\r\nHost: other.example\r\n"
            + "Connection: close, X-Secret\r\nX-Secret: s\r\nKeep-Alive: 5\r\nProxy-Connection: keep-alive\r\n"
            + "TE: trailers\r\nTrailer: X-Sum\r\nUpgrade: h2c\r\nProxy-Authorization: Basic eA==\r\nVia: 1.0 other\r\n"
            + "Accept: */*\r\nContent-Length: 5, 5\r\ncontent-length: 5\r\nExpect: 100-continue\r\n\r\n"
        let head = try #require(HTTPTestSupport.requestHead(raw))
        let routed = try RequestRouter.routeForward(head).get()
        let expected = "POST /v1?x=1 HTTP/1.1\r\nHost: api.example.com:8443\r\nVia: 1.0 other\r\nAccept: */*\r\n"
            + "Expect: 100-continue\r\nContent-Length: 5\r\nVia: 1.1 pinproxy\r\n\r\n"
        #expect(HTTPTestSupport.text(UpstreamRequestWriter.serialise(head, routed: routed)) == expected)
    }

    @Test("the upstream head of a 1.0 chunk-less request is HTTP/1.1 with Host for port 443 without the port")
    func upstreamFrom10() throws {
        let head = try #require(HTTPTestSupport.requestHead("GET http://[::1]/ HTTP/1.0\r\nUser-Agent: t\r\n\r\n"))
        let routed = try RequestRouter.routeForward(head).get()
        #expect(HTTPTestSupport.text(UpstreamRequestWriter.serialise(head, routed: routed))
                == "GET / HTTP/1.1\r\nHost: [::1]\r\nUser-Agent: t\r\nVia: 1.1 pinproxy\r\n\r\n")
    }

    @Test("a chunked request keeps a single normalised Transfer-Encoding")
    func upstreamChunked() throws {
        let head = try #require(HTTPTestSupport.requestHead("PUT /u HTTP/1.1\r\nHost: a.example:8443\r\nTransfer-Encoding: Chunked\r\n\r\n"))
        let routed = try RequestRouter.routeGateway(head, upstream: Endpoint(host: try #require(HostName("b.example")), port: 9443)).get()
        #expect(HTTPTestSupport.text(UpstreamRequestWriter.serialise(head, routed: routed))
                == "PUT /u HTTP/1.1\r\nHost: b.example:9443\r\nTransfer-Encoding: chunked\r\nVia: 1.1 pinproxy\r\n\r\n")
    }

    /// Every shape of the upstream authority: a name, an IPv4 and an IPv6
    /// literal, each at the https default (no port written) and at another
    /// port, the ports of one and of five digits included. Port 80 is 443
    /// upstream (SPEC §3's port rule), so it is not written either.
    @Test("the upstream Host field is the target's authority, without the port when it goes to 443",
          arguments: [
              ("http://api.example/", "api.example"), ("http://api.example:8443/", "api.example:8443"),
              ("http://api.example:1/", "api.example:1"), ("http://api.example:65535/", "api.example:65535"),
              ("http://api.example:10/", "api.example:10"), ("http://api.example:10000/", "api.example:10000"),
              ("http://api.example:80/", "api.example"), ("http://api.example:443/", "api.example"),
              ("http://192.0.2.7/", "192.0.2.7"), ("http://192.0.2.7:8080/", "192.0.2.7:8080"),
              ("http://[::1]/", "[::1]"), ("http://[::1]:8443/", "[::1]:8443"),
              ("http://[2001:db8::7]:443/", "[2001:db8::7]"),
          ])
    func upstreamHost(_ target: String, _ host: String) throws {
        let head = try #require(HTTPTestSupport.requestHead("GET \(target) HTTP/1.1\r\nHost: ignored.example\r\n\r\n"))
        let routed = try RequestRouter.routeForward(head).get()
        #expect(HTTPTestSupport.text(UpstreamRequestWriter.serialise(head, routed: routed))
                == "GET / HTTP/1.1\r\nHost: \(host)\r\nVia: 1.1 pinproxy\r\n\r\n")
    }

    static let responses: [ClientResponseCase] = [
        ClientResponseCase(name: "1.1 client, persistent",
                           raw: "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\n",
                           clientVersion: .http11, keepAlive: true,
                           expected: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ClientResponseCase(name: "1.1 client, closing",
                           raw: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", clientVersion: .http11, keepAlive: false,
                           expected: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nVia: 1.1 pinproxy\r\nConnection: close\r\n\r\n"),
        ClientResponseCase(name: "1.0 client, persistent",
                           raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", clientVersion: .http10, keepAlive: true,
                           expected: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nVia: 1.1 pinproxy\r\nConnection: keep-alive\r\n\r\n"),
        ClientResponseCase(name: "1.0 client, chunked body is sent until close",
                           raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", clientVersion: .http10, keepAlive: true,
                           expected: "HTTP/1.0 200 OK\r\nVia: 1.1 pinproxy\r\nConnection: close\r\n\r\n"),
        ClientResponseCase(name: "1.1 client, chunked kept",
                           raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nVia: 1.1 cdn\r\n\r\n", clientVersion: .http11, keepAlive: true,
                           expected: "HTTP/1.1 200 OK\r\nVia: 1.1 cdn\r\nTransfer-Encoding: chunked\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ClientResponseCase(name: "body until close forces Connection close",
                           raw: "HTTP/1.1 200 OK\r\n\r\n", clientVersion: .http11, keepAlive: true,
                           expected: "HTTP/1.1 200 OK\r\nVia: 1.1 pinproxy\r\nConnection: close\r\n\r\n"),
        ClientResponseCase(name: "interim response has no Connection field",
                           raw: "HTTP/1.1 100 Continue\r\n\r\n", clientVersion: .http11, keepAlive: false,
                           expected: "HTTP/1.1 100 Continue\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ClientResponseCase(name: "missing reason gets the standard phrase",
                           raw: "HTTP/1.1 204\r\n\r\n", clientVersion: .http11, keepAlive: true,
                           expected: "HTTP/1.1 204 No Content\r\nVia: 1.1 pinproxy\r\n\r\n"),
        ClientResponseCase(name: "HEAD response keeps its content-length",
                           raw: "HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\n\r\n", method: "HEAD", clientVersion: .http11, keepAlive: true,
                           expected: "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nVia: 1.1 pinproxy\r\n\r\n"),
    ]

    @Test("the client response head is exact", arguments: responses)
    func clientResponse(_ testCase: ClientResponseCase) throws {
        let head = try #require(HTTPTestSupport.responseHead(testCase.raw, method: testCase.method))
        let bytes = ClientResponseWriter.serialise(head, clientVersion: testCase.clientVersion, keepAlive: testCase.keepAlive)
        #expect(HTTPTestSupport.text(bytes) == testCase.expected)
    }
}

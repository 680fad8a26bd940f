import Testing
@testable import PinproxyCore

/// RFC 9110 §7.6.2 at an intermediary: a TRACE or OPTIONS is forwarded with
/// `Max-Forwards` less one, answered here at zero, and refused when the value
/// cannot be read; every other method relays the field untouched.
@Suite("Max-Forwards")
struct MaxForwardsTests {
    static func head(_ method: String, _ fields: String) throws -> HTTPRequestHead {
        let target = method == "OPTIONS" ? "*" : "/x"
        return try #require(HTTPTestSupport.requestHead("\(method) \(target) HTTP/1.1\r\nHost: a.example\r\n\(fields)\r\n"))
    }

    @Test("TRACE and OPTIONS: the value decides", arguments: ["TRACE", "OPTIONS"], [
        ("", MaxForwards.Decision.relayAsReceived),
        ("Max-Forwards: 0\r\n", .answerHere),
        ("max-forwards: 0\r\n", .answerHere),
        ("MAX-FORWARDS:00\r\n", .answerHere),
        ("Max-Forwards: 1\r\n", .forward(remaining: 0)),
        ("Max-Forwards: 10\r\n", .forward(remaining: 9)),
        ("Max-Forwards: 007\r\n", .forward(remaining: 6)),
        ("Max-Forwards: 2147483648\r\n", .forward(remaining: 2_147_483_647)),
        ("Max-Forwards: 99999999999999999999999999\r\n", .forward(remaining: 2_147_483_647)),
    ] as [(String, MaxForwards.Decision)])
    func decides(method: String, value: (fields: String, expected: MaxForwards.Decision)) throws {
        #expect(try MaxForwards.decide(Self.head(method, value.fields)).get() == value.expected)
    }

    @Test("TRACE and OPTIONS: a value that is not one 1*DIGIT is refused", arguments: ["TRACE", "OPTIONS"], [
        "Max-Forwards:\r\n", "Max-Forwards: -1\r\n", "Max-Forwards: +1\r\n", "Max-Forwards: 1, 1\r\n",
        "Max-Forwards: 1 1\r\n", "Max-Forwards: 0x1\r\n", "Max-Forwards: 1.0\r\n", "Max-Forwards: one\r\n",
        "Max-Forwards: 1\r\nMax-Forwards: 1\r\n", "Max-Forwards: 0\r\nmax-forwards: 5\r\n",
    ])
    func refuses(method: String, fields: String) throws {
        guard case let .failure(error) = MaxForwards.decide(try Self.head(method, fields)) else {
            Issue.record("not refused")
            return
        }
        #expect(error.status == 400 && error.reason == "invalid max-forwards")
    }

    @Test("other methods relay the field as received, whatever it says", arguments:
          ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "trace", "options", "M-SEARCH"],
          ["Max-Forwards: 0\r\n", "Max-Forwards: 5\r\n", "Max-Forwards: bogus\r\nMax-Forwards: 1\r\n"])
    func otherMethods(method: String, fields: String) throws {
        let raw = "\(method) /x HTTP/1.1\r\nHost: a.example\r\nContent-Length: 0\r\n\(fields)\r\n"
        let head = try #require(HTTPTestSupport.requestHead(raw))
        #expect(try MaxForwards.decide(head).get() == .relayAsReceived)
    }

    /// The head sent upstream for `raw` routed as a gateway request.
    static func upstreamHead(_ raw: String) throws -> String {
        let head = try #require(HTTPTestSupport.requestHead(raw))
        let upstream = Endpoint(host: try #require(HostName("api.example.com")), port: 443)
        var routed = try RequestRouter.routeGateway(head, upstream: upstream).get()
        if case let .forward(remaining) = try MaxForwards.decide(head).get() { routed.maxForwards = remaining }
        return String(decoding: UpstreamRequestWriter.serialise(head, routed: routed), as: UTF8.self)
    }

    @Test("the forwarded head carries the decremented value once, in place of every received spelling",
          arguments: ["Max-Forwards", "max-forwards", "MAX-FORWARDS"])
    func rewritten(name: String) throws {
        let sent = try Self.upstreamHead("TRACE /x HTTP/1.1\r\nHost: a\r\n\(name): 3\r\nX-A: 1\r\n\r\n")
        #expect(sent == "TRACE /x HTTP/1.1\r\nHost: api.example.com\r\nX-A: 1\r\nMax-Forwards: 2\r\nVia: 1.1 pinproxy\r\n\r\n")
    }

    @Test("a method the field does not apply to keeps it verbatim")
    func keptForGet() throws {
        let sent = try Self.upstreamHead("GET /x HTTP/1.1\r\nHost: a\r\nMax-Forwards: 0\r\n\r\n")
        #expect(sent == "GET /x HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\nVia: 1.1 pinproxy\r\n\r\n")
    }

    @Test("a server-wide OPTIONS goes upstream in asterisk-form with its value less one")
    func optionsAsterisk() throws {
        let sent = try Self.upstreamHead("OPTIONS http://a.example HTTP/1.1\r\nHost: a\r\nMax-Forwards: 1\r\n\r\n")
        #expect(sent == "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 0\r\nVia: 1.1 pinproxy\r\n\r\n")
    }
}

import Testing
@testable import PinproxyCore

/// RFC 9112 §9.6: a connection the machine ends with an answer, or after a
/// response, is closed in stages whenever the client may still be sending,
/// and at once only when the client has sent its last byte: it half-closed,
/// or its request said it ends the connection and was read whole. Checked for
/// every way such an end comes about, crossed with every kind of request.
@Suite("SessionMachine: which ends close in stages")
struct StagedCloseTests {
    /// A request, and what the rule needs to know of it.
    struct Request: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        /// `Connection: close`, or HTTP/1.0 without keep-alive.
        let endsConnection: Bool
        let hasBody: Bool
        var testDescription: String { name }
    }

    static let host = "Host: api.example.com\r\n"
    static let requests = [
        Request(name: "GET, keep-alive", text: "GET http://api.example.com/x HTTP/1.1\r\n\(host)\r\n",
                endsConnection: false, hasBody: false),
        Request(name: "GET, Connection: close", text: "GET http://api.example.com/x HTTP/1.1\r\n\(host)Connection: close\r\n\r\n",
                endsConnection: true, hasBody: false),
        Request(name: "GET, Connection: close, Content-Length: 0",
                text: "GET http://api.example.com/x HTTP/1.1\r\n\(host)Connection: close\r\nContent-Length: 0\r\n\r\n",
                endsConnection: true, hasBody: false),
        Request(name: "HTTP/1.0 GET", text: "GET http://api.example.com/x HTTP/1.0\r\n\(host)\r\n",
                endsConnection: true, hasBody: false),
        Request(name: "HTTP/1.0 GET, keep-alive", text: "GET http://api.example.com/x HTTP/1.0\r\n\(host)Connection: keep-alive\r\n\r\n",
                endsConnection: false, hasBody: false),
        Request(name: "POST with Content-Length, keep-alive",
                text: "POST http://api.example.com/x HTTP/1.1\r\n\(host)Content-Length: 5\r\n\r\n",
                endsConnection: false, hasBody: true),
        Request(name: "POST with Content-Length, Connection: close",
                text: "POST http://api.example.com/x HTTP/1.1\r\n\(host)Connection: close\r\nContent-Length: 5\r\n\r\n",
                endsConnection: true, hasBody: true),
        Request(name: "POST chunked, Connection: close",
                text: "POST http://api.example.com/x HTTP/1.1\r\n\(host)Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n",
                endsConnection: true, hasBody: true),
        Request(name: "HTTP/1.0 POST with Content-Length",
                text: "POST http://api.example.com/x HTTP/1.0\r\n\(host)Content-Length: 5\r\n\r\n",
                endsConnection: true, hasBody: true),
    ]

    /// How the connection comes to its end, and whether the request's body
    /// (if any) was read whole by then.
    struct Ending: CustomTestStringConvertible, Sendable {
        let name: String
        let readsTheBody: Bool
        /// Only for requests with a body.
        var needsBody = false
        let drive: @Sendable (inout SessionScript, Request) -> [SessionAction]
        var testDescription: String { name }
    }

    static let endings = [
        Ending(name: "host denied (403)", readsTheBody: false) { script, request in
            script.head(request.text.replacingOccurrences(of: "api.example.com", with: "denied.example"),
                        rules: SessionScript.rules(PolicyTable(rules: [], defaultPolicy: .deny)))
        },
        Ending(name: "DNS failure (502)", readsTheBody: false) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            return script.feed(.upstreamFailed(.dns("no such name")))
        },
        Ending(name: "pin violation (502 once recorded)", readsTheBody: false) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            _ = script.feed(.upstreamFailed(.blocked(.pinMismatch)))
            return script.feed(.violationRecorded)
        },
        Ending(name: "upstream closed before answering, body read (502)", readsTheBody: true) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            if request.hasBody { _ = script.feed(.requestBody(.complete)) }
            return script.feed(.upstreamEnded(UpstreamEnd(.closeNotify, buffered: 0)))
        },
        Ending(name: "upstream silent after the request (504)", readsTheBody: true) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            if request.hasBody { _ = script.feed(.requestBody(.complete)) }
            return script.feed(.upstreamEnded(UpstreamEnd(.timedOut, buffered: 0)))
        },
        Ending(name: "a whole response delimited by the upstream's close", readsTheBody: true) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            if request.hasBody { _ = script.feed(.requestBody(.complete)) }
            _ = script.response("HTTP/1.1 200 OK\r\n\r\n", method: request.text.hasPrefix("POST") ? "POST" : "GET")
            return script.feed(.upstreamEnded(UpstreamEnd(.closeNotify, buffered: 0)))
        },
        Ending(name: "an early final response while the upload goes on", readsTheBody: false, needsBody: true) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            _ = script.response("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n", method: "POST")
            return script.feed(.responseBody(.complete))
        },
        Ending(name: "an invalid request body (400)", readsTheBody: false, needsBody: true) { script, request in
            _ = script.head(request.text, rules: SessionScript.rules())
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            return script.feed(.requestBody(.invalid(HTTPError(status: 400, reason: "invalid chunk size"))))
        },
    ]

    @Test("a parsed head refused for what it asks is judged by its framing and Connection", arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", true),
        ("POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\nContent-Length: 5\r\n\r\n", true),
    ])
    func refusedParsedHeads(text: String, staged: Bool) {
        var script = SessionScript()
        let actions = script.head(text, rules: SessionScript.rules())
        guard case .answerAndClose? = actions.last else { Issue.record("not answered: \(actions)"); return }
        #expect(script.machine.closesInStages == staged)
    }

    static var cases: [(Request, Ending)] {
        requests.flatMap { request in endings.filter { !$0.needsBody || request.hasBody }.map { (request, $0) } }
    }

    @Test("in stages unless the client's last request was read whole", arguments: cases)
    func stagedUnlessClientIsDone(request: Request, ending: Ending) throws {
        var script = SessionScript()
        let actions = ending.drive(&script, request)
        guard case .answerAndClose? = actions.last else {
            Issue.record("not ended with an answer: \(actions)")
            return
        }
        let clientIsDone = request.endsConnection && (!request.hasBody || ending.readsTheBody)
        #expect(script.machine.closesInStages == !clientIsDone)
    }

    @Test("a client that half-closed sends nothing more: closed at once", arguments: requests)
    func halfClosedClient(request: Request) {
        var script = SessionScript()
        _ = script.feed(.clientEnded(buffered: request.text.utf8.count))
        let actions = script.head(request.text.replacingOccurrences(of: "api.example.com", with: "denied.example"),
                                  rules: SessionScript.rules(PolicyTable(rules: [], defaultPolicy: .deny)))
        guard case .answerAndClose? = actions.last else { Issue.record("not answered: \(actions)"); return }
        #expect(!script.machine.closesInStages)
    }

    /// Its framing unknown, a head that does not parse may have a body
    /// behind it, whatever its `Connection` says. (One that parses and is
    /// refused, two `Host` fields say, is judged as any parsed head is.)
    @Test("a head that does not parse, or that stalls, leaves the client's next bytes unknown: in stages",
          arguments: ["GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n",
                      "GET /x HTTP/1.1\r\nBad Field: v\r\n\r\n",
                      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n"])
    func invalidHeads(text: String) {
        var script = SessionScript()
        let actions = script.head(text, rules: SessionScript.rules())
        guard case .answerAndClose? = actions.last else { Issue.record("not answered: \(actions)"); return }
        #expect(script.machine.closesInStages)

        var stalled = SessionScript()
        _ = stalled.head("GET / HTT", rules: SessionScript.rules())
        #expect(stalled.feed(.clientTimedOut(buffered: 9)).count == 1)
        #expect(stalled.machine.closesInStages)
    }

    @Test("an idle connection closed without an answer has nothing to protect")
    func idleCloses() {
        var draining = SessionScript()
        _ = draining.head(Self.requests[0].text, rules: SessionScript.rules())
        _ = draining.feed(.upstreamReady(pooled: false, reported: false))
        _ = draining.response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(draining.feed(.responseBody(.complete)) == [.nextRequest(reuseUpstream: true)])
        let actions = draining.feed(.drain(buffered: 0))
        #expect(actions == [.answerAndClose(CloseReason(.completed, in: .idle))])
        #expect(!draining.machine.closesInStages)
    }
}

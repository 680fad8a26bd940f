import Testing
@testable import PinproxyCore

/// The session's decisions as whole event → action sequences, without sockets.
@Suite("SessionMachine: keep-alive, pipelining, interim responses, framing")
struct SessionMachineTests {
    let rules = SessionScript.rules()

    @Test("a keep-alive GET: route, acquire, send, relay, pool the upstream, wait for the next head")
    func keepAliveGet() throws {
        var script = SessionScript()
        let request = "GET http://api.example.com/a HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        #expect(script.head(request, rules: rules)
                == [.startExchange(consumedHead: request.utf8.count, upstream: SessionScript.api, rule: "default_policy")])
        let ready = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(ready == [.sendRequestHead(Array("GET /a HTTP/1.1\r\nHost: api.example.com\r\nVia: 1.1 pinproxy\r\n\r\n".utf8)),
                          .relayResponse])
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
        let head = script.response(response)
        #expect(head == [.sendResponseHead(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nVia: 1.1 pinproxy\r\n\r\n".utf8),
                                           consumedHead: response.utf8.count, framing: .contentLength(5),
                                           dropsChunkFraming: false)])
        #expect(script.feed(.responseBody(.complete)) == [.nextRequest(reuseUpstream: true)])
        #expect(script.feed(.requestHead(.incomplete, buffered: 0, rules: rules, draining: false)) == [.awaitRequestHead(idle: true)])
        #expect(script.machine.state == .awaitingHead)
    }

    /// RFC 9112 §9.3: whether the client connection serves another request, by request and response.
    static let persistence: [(request: String, response: String, clientKeepsAlive: Bool, upstreamReused: Bool)] = [
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true, true),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, true),
        ("GET / HTTP/1.0\r\nHost: api.example.com\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, true),
        ("GET / HTTP/1.0\r\nHost: api.example.com\r\nConnection: keep-alive\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true, true),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", true, false),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", true, false),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", true, true),
        // A chunked body cannot reach a 1.0 client except delimited by close.
        ("GET / HTTP/1.0\r\nHost: api.example.com\r\nConnection: keep-alive\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, true),
        ("HEAD / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true, true),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n", true, true),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", true, true),
    ]

    /// Whether the exchange needs any further client byte once its head is
    /// parsed: not when the request is complete and the connection ends with
    /// it (RFC 9112 §9.6); yes for a body still to come and a connection kept
    /// alive (a CONNECT: `SessionConnectTests`).
    static let clientInput: [(request: String, needsNoMore: Bool)] = [
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\nConnection: keep-alive, close\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nHost: api.example.com\r\n\r\n", true),
        ("DELETE / HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nHost: api.example.com\r\nConnection: keep-alive\r\n\r\n", false),
        ("POST / HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\nContent-Length: 5\r\n\r\n", false),
        ("POST / HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n", false),
        ("POST / HTTP/1.0\r\nHost: api.example.com\r\nContent-Length: 5\r\n\r\n", false),
    ]

    @Test("a complete request on a connection that ends with it needs no more client input", arguments: clientInput)
    func clientInputAfterHead(request: String, needsNoMore: Bool) throws {
        var script = SessionScript(mode: .gateway(upstream: SessionScript.api))
        _ = script.head(request, rules: rules)
        let exchange = try #require(script.machine.exchange)
        #expect(exchange.needsNoMoreClientInput == needsNoMore)
    }

    @Test("a keep-alive request during a drain still reads its client: only the client's own close means nothing more comes")
    func drainingStillReadsClient() throws {
        var script = SessionScript(mode: .gateway(upstream: SessionScript.api))
        _ = script.head("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", rules: rules, draining: true)
        let exchange = try #require(script.machine.exchange)
        #expect(!exchange.clientKeepAlive)
        #expect(!exchange.needsNoMoreClientInput)
    }

    @Test("keep-alive and close follow RFC 9112 §9.3 for both connections", arguments: persistence)
    func persistenceRules(request: String, response: String, clientKeepsAlive: Bool, upstreamReused: Bool) throws {
        var script = SessionScript(mode: .gateway(upstream: SessionScript.api))
        _ = script.head(request, rules: rules)
        _ = script.feed(.upstreamReady(pooled: true, reported: false))
        let head = script.response(response, method: request.hasPrefix("HEAD") ? "HEAD" : "GET")
        let framing = head.compactMap { action -> BodyFraming? in
            if case let .sendResponseHead(_, _, framing, _) = action { return framing } else { return nil }
        }.first
        // HEAD, 204 and 304 have no body whatever their fields say (RFC 9112 §6.3).
        if request.hasPrefix("HEAD") || response.contains(" 204 ") || response.contains(" 304 ") { #expect(framing == BodyFraming.none) }
        let end = script.feed(.responseBody(.complete))
        #expect(end == (clientKeepsAlive ? [.nextRequest(reuseUpstream: upstreamReused)]
                                         : [.releaseUpstream(reuse: upstreamReused),
                                            .answerAndClose(CloseReason(.completed, in: .responseBody))]))
    }

    @Test("pipelined requests are served one at a time, in order")
    func pipelining() {
        var script = SessionScript()
        let first = "GET http://api.example.com/1 HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        let second = "GET http://api.example.com/2 HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        // Both arrive at once: only the first head is consumed and started.
        #expect(script.head(first, buffered: first.utf8.count + second.utf8.count, rules: rules)
                == [.startExchange(consumedHead: first.utf8.count, upstream: SessionScript.api, rule: "default_policy")])
        // While the first is under way, nothing reads the second.
        #expect(script.feed(.clientEnded(buffered: second.utf8.count)) == [])
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        _ = script.response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(script.feed(.responseBody(.complete)) == [.nextRequest(reuseUpstream: true)])
        // The half-closed client still gets its second answer, then the connection ends.
        #expect(script.head(second, rules: rules)
                == [.startExchange(consumedHead: second.utf8.count, upstream: SessionScript.api, rule: "default_policy")])
        _ = script.feed(.upstreamReady(pooled: true, reported: false))
        _ = script.response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(script.feed(.responseBody(.complete)) == [.nextRequest(reuseUpstream: true)])
        #expect(script.feed(.requestHead(.incomplete, buffered: 0, rules: rules, draining: false))
                == [.answerAndClose(CloseReason(.completed, in: .idle))])
    }

    @Test("interim responses reach a 1.1 client and never a 1.0 one; the final head follows")
    func interimResponses() {
        for version in ["1.1", "1.0"] {
            var script = SessionScript()
            _ = script.head("GET http://api.example.com/ HTTP/\(version)\r\nHost: api.example.com\r\n\r\n", rules: rules)
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            let hints = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
            let interim = script.response(hints)
            let relayed = Array("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\nVia: 1.1 pinproxy\r\n\r\n".utf8)
            #expect(interim == [.relayInterimResponse(version == "1.1" ? relayed : nil, consumedHead: hints.utf8.count)],
                    "HTTP/\(version)")
            #expect(script.machine.exchange?.responseStarted == (version == "1.1"))
            #expect(script.response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").count == 1)
        }
    }

    @Test("an expectation addressed to pinproxy is answered by pinproxy once the request is upstream")
    func continueForProxy() {
        var script = SessionScript()
        _ = script.head("PUT http://api.example.com/u HTTP/1.1\r\nHost: api.example.com\r\nConnection: expect\r\n"
                        + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\n", rules: rules)
        let ready = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(ready.dropFirst().elementsEqual([.sendInterimResponse(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)),
                                                 .relayRequestBody, .relayResponse]))
    }

    @Test("an early final response during an upload ends both connections after the response")
    func earlyResponse() {
        var script = SessionScript()
        _ = script.head("POST http://api.example.com/u HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 99999\r\n\r\n", rules: rules)
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        _ = script.feed(.requestBody(.needMore))
        let head = script.response("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n")
        // The client is told the connection closes.
        guard case let .sendResponseHead(bytes, _, _, _) = head.first else { Issue.record("\(head)"); return }
        #expect(String(decoding: bytes, as: UTF8.self).contains("Connection: close\r\n"))
        #expect(script.feed(.responseBody(.complete))
                == [.releaseUpstream(reuse: false), .answerAndClose(CloseReason(.completed, in: .responseBody))])
    }

    @Test("a client that closes mid-upload is cut at once; one that half-closes after it is answered")
    func clientEndsDuringUpload() {
        var script = SessionScript()
        _ = script.head("POST http://api.example.com/u HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 10\r\n\r\n", rules: rules)
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(script.feed(.clientEnded(buffered: 4)) == [.relayRequestBody])
        #expect(script.feed(.requestBody(.needMore))
                == [.releaseUpstream(reuse: false), .close(CloseReason(.clientClosed, in: .response))])

        var complete = SessionScript()
        _ = complete.head("POST http://api.example.com/u HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 10\r\n\r\n", rules: rules)
        _ = complete.feed(.upstreamReady(pooled: false, reported: false))
        _ = complete.feed(.clientEnded(buffered: 10))
        #expect(complete.feed(.requestBody(.complete)) == [])
        _ = complete.response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(complete.feed(.responseBody(.complete)) == [.nextRequest(reuseUpstream: true)])
    }

    @Test("a drain closes a connection between requests and lets an exchange finish")
    func drain() {
        var idle = SessionScript()
        #expect(idle.feed(.drain(buffered: 0)) == [.answerAndClose(CloseReason(.completed, in: .idle))])
        var busy = SessionScript()
        _ = busy.head("GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", rules: rules)
        #expect(busy.feed(.drain(buffered: 0)) == [])
        // A head read while draining is served without keep-alive.
        var late = SessionScript()
        _ = late.head("GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", rules: rules, draining: true)
        _ = late.feed(.upstreamReady(pooled: false, reported: false))
        _ = late.response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(late.feed(.responseBody(.complete)).last == .answerAndClose(CloseReason(.completed, in: .responseBody)))
    }

    @Test("after the close nothing more happens")
    func closedIsFinal() {
        var script = SessionScript()
        _ = script.feed(.clientFailed)
        #expect(script.machine.state == .closed)
        #expect(script.head("GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", rules: rules) == [])
        #expect(script.feed(.drain(buffered: 0)) == [])
    }
}

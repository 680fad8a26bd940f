import Testing
@testable import PinproxyCore

/// Every way a session can fail, as event → action sequences, and the answer
/// each one gets (SPEC §3).
@Suite("SessionMachine: refusals, upstream failures, retries and timeouts")
struct SessionFailureTests {
    static let get = "GET http://api.example.com/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
    let rules = SessionScript.rules()

    /// The status and `Proxy-Status` error of a session's last action (nil: closed without an answer).
    static func answer(_ actions: [SessionAction]) -> (status: Int, error: ProxyStatusError?)? {
        SessionScript.answer(in: actions).map { ($0.status, $0.proxyStatusError) }
    }

    @Test("refused heads are answered before anything goes upstream", arguments: [
        ("GET / HTTP/1.1\r\n\r\n", 400, .httpRequestError),  // no Host in 1.1
        ("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, .httpRequestError),  // two Host fields
        ("CONNECT api.example.com:25 HTTP/1.1\r\nHost: api.example.com:25\r\n\r\n", 403, .httpRequestDenied),
        ("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\nContent-Length: 3\r\n\r\n", 400, .httpRequestError),
        ("CONNECT api.example.com HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400, .httpRequestError),  // no port
        ("GET * HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400, .httpRequestError),  // asterisk-form is OPTIONS only
        ("TRACE /x HTTP/1.1\r\nHost: api.example.com\r\nMax-Forwards: 1, 1\r\n\r\n", 400, .httpRequestError),
        ("GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", 508, ProxyStatusError.proxyLoopDetected),
        ("GET http://localhost:8080/ HTTP/1.1\r\nHost: localhost:8080\r\n\r\n", 508, .proxyLoopDetected),
        ("GET http://denied.example/ HTTP/1.1\r\nHost: denied.example\r\n\r\n", 403, .httpRequestDenied),
        ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400, .httpRequestError),
        ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, .proxyInternalResponse),
    ] as [(String, Int, ProxyStatusError)])
    func refusedHeads(request: String, status: Int, error: ProxyStatusError) {
        var script = SessionScript()
        let denyUnlisted = SessionScript.rules(PolicyTable(rules: [], defaultPolicy: .deny))
        let actions = script.head(request, rules: request.contains("denied.example") ? denyUnlisted : rules)
        #expect(!SessionScript.startsExchange(actions))
        #expect(Self.answer(actions)?.status == status && Self.answer(actions)?.error == error, "\(actions)")
        #expect(script.machine.state == .closed)
    }

    /// The `details` of a refusal are pinproxy's own words (docs/http.md):
    /// whatever part of the request it refused, none of its bytes come back.
    @Test("a refusal's answer never echoes the request's bytes", arguments: [
        "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: Zq7marker\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Zq7marker\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Zq7marker, chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nZq7marker\u{1}: v\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-A: Zq7marker\u{0}\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nZq7marker_Length: 1\r\nContent_Length: 1\r\n\r\n",
        "GET /Zq7marker\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n",
        "GE\u{1}T /Zq7marker HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET http://Zq7marker..example/ HTTP/1.1\r\nHost: Zq7marker..example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: Zq7marker:99999\r\n\r\n",
        "CONNECT Zq7marker HTTP/1.1\r\nHost: Zq7marker\r\n\r\n",
    ])
    func refusalsDoNotEcho(request: String) throws {
        var script = SessionScript()
        let actions = script.head(request, rules: rules)
        guard case let .answerAndClose(reason) = actions.last else {
            Issue.record("not refused: \(actions)")
            return
        }
        let answer = String(decoding: try #require(reason.answer).serialise(), as: UTF8.self)
        #expect((400..<600).contains(try #require(reason.answer).status))
        #expect(!answer.lowercased().contains("zq7marker"), "\(answer)")
    }

    @Test("each upstream failure gets its status and Proxy-Status error", arguments: [
        (UpstreamFailureKind.dns("no such name"), 502, ProxyStatusError.dnsError),
        (.refused("127.0.0.1:1: Connection refused"), 502, .connectionRefused),
        (.timedOut("connect to 127.0.0.1:1 timed out"), 504, .connectionTimeout),
        (.tls("wrong version number"), 502, .tlsProtocolError),
    ])
    func upstreamFailures(failure: UpstreamFailureKind, status: Int, error: ProxyStatusError) {
        var script = SessionScript()
        _ = script.head(Self.get, rules: rules)
        let actions = script.feed(.upstreamFailed(failure))
        #expect(actions.count == 1)
        #expect(Self.answer(actions)?.status == status && Self.answer(actions)?.error == error)
    }

    @Test("a blocked upstream's 502 waits until its violation event is durable")
    func blockedWaitsForTheLog() {
        var script = SessionScript()
        _ = script.head(Self.get, rules: rules)
        #expect(script.feed(.upstreamFailed(.blocked(.pinMismatch))) == [.recordViolation(blocking: true)])
        #expect(script.machine.state != .closed)
        let answer = script.feed(.violationRecorded)
        #expect(answer == [.answerAndClose(CloseReason(.trustBlocked(SessionScript.api, .pinMismatch), in: .connect))])
        #expect(Self.answer(answer)?.status == 502 && Self.answer(answer)?.error == .tlsCertificateError)
    }

    @Test("report-only: the violation is recorded without waiting and the request goes on")
    func reportOnly() {
        var script = SessionScript()
        _ = script.head(Self.get, rules: rules)
        let ready = script.feed(.upstreamReady(pooled: false, reported: true))
        #expect(ready.first == .recordViolation(blocking: false))
        #expect(ready.last == .relayResponse)
    }

    static func ended(_ cause: UpstreamEnd.Cause = .closeNotify, buffered: Int = 0) -> SessionEvent {
        .upstreamEnded(UpstreamEnd(cause, buffered: buffered))
    }

    @Test("a pooled connection found closed is replaced once, for idempotent requests without a body that got nothing back",
          arguments: [
              ("GET", "", true), ("HEAD", "", true), ("OPTIONS", "", true), ("DELETE", "", true), ("PUT", "", true),
              ("TRACE", "", true), ("POST", "", false), ("PATCH", "", false),
              ("PUT", "Content-Length: 3\r\n", false), ("GET", "Transfer-Encoding: chunked\r\n", false),
          ])
    func stalePoolRetry(method: String, body: String, retried: Bool) {
        var script = SessionScript()
        _ = script.head("\(method) http://api.example.com/x HTTP/1.1\r\nHost: api.example.com\r\n\(body)\r\n", rules: rules)
        _ = script.feed(.upstreamReady(pooled: true, reported: false))
        let actions = script.feed(Self.ended())
        if retried {
            #expect(actions == [.releaseUpstream(reuse: false), .reconnectUpstream])
            // The fresh connection is never retried: its close is the answer.
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            #expect(Self.answer(script.feed(Self.ended()))?.error == .connectionTerminated)
        } else {
            #expect(actions.first == .releaseUpstream(reuse: false))
            #expect(Self.answer(actions)?.status == 502 && Self.answer(actions)?.error == .connectionTerminated)
        }
    }

    @Test("no retry when the pooled connection sent bytes, timed out, or an interim response was relayed")
    func noRetry() {
        for (event, status) in [(Self.ended(buffered: 3), 502), (Self.ended(.timedOut), 504)] {
            var script = SessionScript()
            _ = script.head(Self.get, rules: rules)
            _ = script.feed(.upstreamReady(pooled: true, reported: false))
            #expect(Self.answer(script.feed(event))?.status == status)
        }
        var interim = SessionScript()
        _ = interim.head(Self.get, rules: rules)
        _ = interim.feed(.upstreamReady(pooled: true, reported: false))
        _ = interim.response("HTTP/1.1 100 Continue\r\n\r\n")
        let actions = interim.feed(Self.ended())
        #expect(actions == [.releaseUpstream(reuse: false),
                            .close(CloseReason(.upstreamEndedMidResponse(SessionScript.api, how: .closeNotify), in: .response))])
    }

    /// Every way an attached connection can end, before any response byte:
    /// a pooled connection is retried unless it timed out; a fresh one is
    /// answered by how it ended (the machine's switch over `UpstreamEnd.Cause`).
    @Test("each way a connection ends before the response: retried when pooled unless timed out, else its answer",
          arguments: [
              (UpstreamEnd.Cause.closeNotify, true, 502, ProxyStatusError.connectionTerminated),
              (.incompleteClose, true, 502, .connectionTerminated),
              (.socketFailed("read: Connection reset by peer"), true, 502, .connectionTerminated),
              (.tlsFailed("bad record mac"), true, 502, .tlsProtocolError),
              (.timedOut, false, 504, .httpResponseTimeout),
          ])
    func endingsBeforeResponse(cause: UpstreamEnd.Cause, retriedWhenPooled: Bool, status: Int, error: ProxyStatusError) {
        var pooled = SessionScript()
        _ = pooled.head(Self.get, rules: rules)
        _ = pooled.feed(.upstreamReady(pooled: true, reported: false))
        let retry = pooled.feed(Self.ended(cause))
        #expect((retry == [.releaseUpstream(reuse: false), .reconnectUpstream]) == retriedWhenPooled, "\(retry)")

        var fresh = SessionScript()
        _ = fresh.head(Self.get, rules: rules)
        _ = fresh.feed(.upstreamReady(pooled: false, reported: false))
        let answer = Self.answer(fresh.feed(Self.ended(cause)))
        #expect(answer?.status == status && answer?.error == error, "\(String(describing: answer))")
    }

    @Test("a TLS failure on an attached connection is 502 tls_protocol_error")
    func tlsFailureMidExchange() {
        var script = SessionScript()
        _ = script.head(Self.get, rules: rules)
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        let actions = script.feed(Self.ended(.tlsFailed("bad record mac")))
        #expect(Self.answer(actions)?.error == .tlsProtocolError)
    }

    @Test("an upstream ending mid-body cuts the client; one ending a close-delimited body completes it")
    func upstreamEndsDuringBody() {
        var cut = SessionScript()
        _ = cut.head(Self.get, rules: rules)
        _ = cut.feed(.upstreamReady(pooled: false, reported: false))
        _ = cut.response("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
        #expect(cut.feed(Self.ended()) == [.releaseUpstream(reuse: false),
                                           .close(CloseReason(.upstreamEndedMidResponse(SessionScript.api, how: .closeNotify), in: .responseBody))])
        var delimited = SessionScript()
        _ = delimited.head(Self.get, rules: rules)
        _ = delimited.feed(.upstreamReady(pooled: false, reported: false))
        let head = delimited.response("HTTP/1.1 200 OK\r\n\r\n")
        guard case let .sendResponseHead(bytes, _, framing, _) = head.first else { Issue.record("\(head)"); return }
        #expect(framing == .untilClose && String(decoding: bytes, as: UTF8.self).contains("Connection: close"))
        #expect(delimited.feed(Self.ended()) == [.relayResponse, .releaseUpstream(reuse: false),
                                                 .answerAndClose(CloseReason(.completed, in: .responseBody))])
    }

    /// Every way a response can be cut after its head went out, for a client
    /// of `version` and a response head: whether the close is a reset.
    @Test("a cut response resets the client exactly when its body ends at the close", arguments: [
        // A body delimited by the upstream's close, to a 1.1 or a 1.0 client.
        ("HTTP/1.1", "HTTP/1.1 200 OK\r\n\r\n", true),
        ("HTTP/1.0", "HTTP/1.1 200 OK\r\n\r\n", true),
        // A chunked body: dechunked and delimited by close for a 1.0 client only.
        ("HTTP/1.0", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", true),
        ("HTTP/1.1", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false),
        // Content-Length tells every client the body is short.
        ("HTTP/1.0", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", false),
        ("HTTP/1.1", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", false),
    ])
    func cutResponsesReset(version: String, responseHead: String, resets: Bool) {
        let api = SessionScript.api
        // An incomplete close inside a body the upstream delimited by its close is a truncation.
        let delimitedByClose = !responseHead.contains("chunked") && !responseHead.contains("Content-Length")
        let cuts: [(SessionEvent, CloseReason)] = [
            (Self.ended(.incompleteClose),
             CloseReason(delimitedByClose ? .upstreamTruncatedResponse(api)
                                          : .upstreamEndedMidResponse(api, how: .incompleteClose), in: .responseBody)),
            (Self.ended(.tlsFailed("bad record mac")),
             CloseReason(.upstreamEndedMidResponse(api, how: .tlsFailed("bad record mac")), in: .responseBody)),
            (Self.ended(.socketFailed("read: Connection reset by peer")),
             CloseReason(.upstreamEndedMidResponse(api, how: .socketFailed("read: Connection reset by peer")), in: .responseBody)),
            (Self.ended(.timedOut), CloseReason(.upstreamEndedMidResponse(api, how: .timedOut), in: .responseBody)),
            (.responseBody(.invalid(HTTPError(status: 400, reason: "invalid chunk size"))),
             CloseReason(.invalidResponse(api, reason: "invalid chunk size"), in: .responseBody)),
            (.clientFailed, CloseReason(.clientClosed, in: .responseBody)),
            (.clientTimedOut(buffered: 0), CloseReason(.clientTimedOut, in: .responseBody)),
        ]
        for (cut, reason) in cuts {
            var script = SessionScript()
            _ = script.head("GET http://api.example.com/x \(version)\r\nHost: api.example.com\r\n\r\n", rules: rules)
            _ = script.feed(.upstreamReady(pooled: false, reported: false))
            _ = script.response(responseHead)
            #expect(script.machine.cutResponseNeedsReset == resets)
            let close: SessionAction = resets ? .reset(reason) : .close(reason)
            #expect(script.feed(cut) == [.releaseUpstream(reuse: false), close], "\(version) \(cut)")
        }
        // A close-delimited body ended by the upstream's clean close is whole: an ordinary close.
        var whole = SessionScript()
        _ = whole.head("GET http://api.example.com/x \(version)\r\nHost: api.example.com\r\n\r\n", rules: rules)
        _ = whole.feed(.upstreamReady(pooled: false, reported: false))
        _ = whole.response(responseHead)
        if responseHead.contains("chunked") {
            let end = whole.feed(.responseBody(.complete))
            #expect(!end.contains { if case .reset = $0 { true } else { false } }, "\(end)")
            #expect(!whole.machine.cutResponseNeedsReset)
        } else if !responseHead.contains("Content-Length") {
            #expect(whole.feed(Self.ended()) == [.relayResponse, .releaseUpstream(reuse: false),
                                                 .answerAndClose(CloseReason(.completed, in: .responseBody))])
        }
    }

    @Test("an invalid response head is 502 http_protocol_error; an invalid body after the head cuts the client")
    func invalidResponses() {
        var head = SessionScript()
        _ = head.head(Self.get, rules: rules)
        _ = head.feed(.upstreamReady(pooled: false, reported: false))
        let answer = head.response("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        #expect(answer.first == .releaseUpstream(reuse: false))
        #expect(Self.answer(answer)?.status == 502 && Self.answer(answer)?.error == .httpProtocolError)

        var body = SessionScript()
        _ = body.head(Self.get, rules: rules)
        _ = body.feed(.upstreamReady(pooled: false, reported: false))
        _ = body.response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        let cut = body.feed(.responseBody(.invalid(HTTPError(status: 400, reason: "invalid chunk size"))))
        #expect(cut == [.releaseUpstream(reuse: false),
                        .close(CloseReason(.invalidResponse(SessionScript.api, reason: "invalid chunk size"), in: .responseBody))])
    }

    @Test("an invalid request body is 400: before the head went upstream nothing was, after it the upstream is closed")
    func invalidRequestBodies() {
        var before = SessionScript()
        _ = before.head("POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n", rules: rules)
        let early = before.feed(.requestBody(.invalid(HTTPError(status: 400, reason: "invalid chunk size"))))
        #expect(early.count == 1 && Self.answer(early)?.status == 400)

        var after = SessionScript()
        _ = after.head("POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n", rules: rules)
        _ = after.feed(.upstreamReady(pooled: false, reported: false))
        let late = after.feed(.requestBody(.invalid(HTTPError(status: 400, reason: "invalid chunk size"))))
        #expect(late.first == .releaseUpstream(reuse: false) && Self.answer(late)?.status == 400)
    }

    @Test("head timeouts: silent close before any byte, 408 once a head began, a plain close mid-exchange")
    func timeouts() {
        var silent = SessionScript()
        #expect(silent.feed(.clientTimedOut(buffered: 0)) == [.close(CloseReason(.clientTimedOut, in: .idle))])
        var partial = SessionScript()
        #expect(partial.feed(.requestHead(.incomplete, buffered: 12, rules: rules, draining: false)) == [.awaitRequestHead(idle: false)])
        #expect(Self.answer(partial.feed(.clientTimedOut(buffered: 12)))?.status == 408)
        var busy = SessionScript()
        _ = busy.head(Self.get, rules: rules)
        #expect(busy.feed(.clientTimedOut(buffered: 0)) == [.close(CloseReason(.clientTimedOut, in: .connect))])
    }

    @Test("a client that half-closes in the middle of a head is closed without an answer")
    func halfClosedMidHead() {
        var script = SessionScript()
        _ = script.feed(.clientEnded(buffered: 10))
        #expect(script.feed(.requestHead(.incomplete, buffered: 10, rules: rules, draining: false))
                == [.close(CloseReason(.clientClosed, in: .requestHead))])
    }

    @Test("a client failing mid-exchange releases the upstream without pooling it")
    func clientFails() {
        var script = SessionScript()
        _ = script.head(Self.get, rules: rules)
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(script.feed(.clientFailed) == [.releaseUpstream(reuse: false), .close(CloseReason(.clientClosed, in: .response))])
    }
}

import Testing
@testable import PinproxyCore

/// CONNECT (SPEC §3.1) as event → action sequences: what is intercepted,
/// tunnelled or refused; no TLS with the client before the upstream's
/// verdict; the requests inside an intercepted tunnel; the tunnel's end.
@Suite("SessionMachine: CONNECT interception, tunnels and refusals")
struct SessionConnectTests {
    static let api = SessionScript.api
    static let connectAPI = "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n"

    /// A pinned `api.example.com`, a `disable` rule, and `default_policy` as given.
    static func rules(interception: InterceptionScope? = InterceptionScope(names: ["api.example.com"]),
                      defaultPolicy: PolicyTable.DefaultPolicy = .policy(.standard), connectPorts: Set<UInt16> = [443]) -> RequestRules {
        let table = PolicyTable(rules: [
            HostRule(pattern: HostPattern("api.example.com")!,
                     policy: TrustPolicy(kind: .pinPublicKeys, pins: [try! SPKIPin.parse("sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")])),
            HostRule(pattern: HostPattern("legacy.example")!, policy: TrustPolicy(kind: .disable)),
        ], defaultPolicy: defaultPolicy)
        return RequestRules(policies: table, listeners: [
            ListenerConfiguration(address: Endpoint(host: HostName("127.0.0.1")!, port: 8080), mode: .forward),
        ], connectPorts: connectPorts, interception: interception)
    }

    static func answer(_ actions: [SessionAction]) -> (status: Int, error: ProxyStatusError?, details: String?)? {
        guard let answer = SessionScript.answer(in: actions) else { return nil }
        return (answer.status, answer.proxyStatusError, answer.details)
    }

    /// A session whose CONNECT to api.example.com was intercepted and whose client TLS is up.
    static func intercepted() -> SessionScript {
        var script = SessionScript()
        _ = script.head(connectAPI, rules: rules())
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        _ = script.feed(.clientTLSReady)
        return script
    }

    @Test("a pinned host is intercepted: the upstream is verified first, then 200 and the client's TLS")
    func interceptsAPinnedHost() {
        var script = SessionScript()
        let start = script.head(Self.connectAPI, rules: Self.rules())
        #expect(start == [.startExchange(consumedHead: Self.connectAPI.utf8.count, upstream: Self.api, rule: "api.example.com")])
        let ready = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(ready == [.beginInterception(SessionMachine.connectEstablished, host: Self.api.host)])
        #expect(script.machine.state == .clientHandshake)
        #expect(script.feed(.clientTLSReady) == [.readRequestHead])
        #expect(script.machine.state == .awaitingHead && script.machine.interceptedUpstream == Self.api)
    }

    @Test("a CONNECT, intercepted or tunnelled, still needs its client's bytes, even with Connection: close")
    func connectNeedsClientInput() throws {
        for target in ["api.example.com:443", "legacy.example:443"] {
            var script = SessionScript()
            _ = script.head("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\nConnection: close\r\n\r\n", rules: Self.rules())
            let exchange = try #require(script.machine.exchange)
            #expect(exchange.connect == (target.hasPrefix("api") ? .intercept : .tunnel))
            #expect(!exchange.needsNoMoreClientInput)
        }
    }

    @Test("a blocked upstream is a plain 502 after the durable event: no 200, no client TLS")
    func blockedBeforeTheAnswer() {
        var script = SessionScript()
        _ = script.head(Self.connectAPI, rules: Self.rules())
        #expect(script.feed(.upstreamFailed(.blocked(.pinMismatch))) == [.recordViolation(blocking: true)])
        let answer = script.feed(.violationRecorded)
        #expect(Self.answer(answer)?.status == 502 && Self.answer(answer)?.error == .tlsCertificateError)
        #expect(!answer.contains { if case .beginInterception = $0 { true } else { false } })
        #expect(script.machine.state == .closed)
    }

    @Test("report-only: the violation is recorded, then the tunnel is intercepted")
    func reportOnlyRecordsThenIntercepts() {
        var script = SessionScript()
        _ = script.head(Self.connectAPI, rules: Self.rules())
        #expect(script.feed(.upstreamReady(pooled: false, reported: true))
                == [.recordViolation(blocking: false), .beginInterception(SessionMachine.connectEstablished, host: Self.api.host)])
    }

    @Test("each upstream failure of an intercepted CONNECT gets the table's answer", arguments: [
        (UpstreamFailureKind.dns("no such name"), 502, ProxyStatusError.dnsError),
        (.refused("refused"), 502, .connectionRefused),
        (.timedOut("timed out"), 504, .connectionTimeout),
        (.tls("wrong version number"), 502, .tlsProtocolError),
    ])
    func upstreamFailures(failure: UpstreamFailureKind, status: Int, error: ProxyStatusError) {
        var script = SessionScript()
        _ = script.head(Self.connectAPI, rules: Self.rules())
        let actions = script.feed(.upstreamFailed(failure))
        #expect(Self.answer(actions)?.status == status && Self.answer(actions)?.error == error)
    }

    @Test("what each CONNECT becomes", arguments: [
        // (target, interception configured, default_policy, expected: "intercept" | "tunnel" | status)
        ("api.example.com:443", true, PolicyTable.DefaultPolicy.policy(.standard), "intercept"),
        ("API.Example.COM:443", true, .policy(.standard), "intercept"),
        ("api.example.com:443", false, .policy(.standard), "403 interception not configured"),
        ("legacy.example:443", true, .policy(.standard), "tunnel"),
        ("legacy.example:443", false, .policy(.standard), "tunnel"),
        ("unlisted.example.org:443", true, .policy(.standard), "tunnel"),
        ("unlisted.example.org:443", true, .deny, "403 http_request_denied"),
        ("unlisted.example.org:443", true, .policy(TrustPolicy(kind: .anchors, anchorFiles: ["/x.pem"])),
         "403 default_policy cannot be enforced on a tunnel"),
        ("api.example.com:8443", true, .policy(.standard), "403 port not allowed"),
        ("127.0.0.1:8080", true, .policy(.standard), "508"),
        ("[::1]:443", true, .policy(.standard), "tunnel"),
    ] as [(String, Bool, PolicyTable.DefaultPolicy, String)])
    func dispositions(target: String, interception: Bool, defaultPolicy: PolicyTable.DefaultPolicy, expected: String) {
        var script = SessionScript()
        let rules = Self.rules(interception: interception ? InterceptionScope(names: ["api.example.com"]) : nil,
                               defaultPolicy: defaultPolicy, connectPorts: [443, 8080])
        let request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n"
        let actions = script.head(request, rules: rules)
        switch expected {
        case "intercept":
            #expect(actions.count == 1 && { if case .startExchange = actions[0] { true } else { false } }(), "\(actions)")
        case "tunnel":
            #expect(actions.count == 1 && { if case .openTunnel = actions[0] { true } else { false } }(), "\(actions)")
        default:
            let answer = Self.answer(actions)
            let status = Int(expected.prefix(3))!
            #expect(answer?.status == status, "\(actions)")
            let detail = expected.dropFirst(4)
            if detail == "http_request_denied" {
                #expect(answer?.error == .httpRequestDenied)
            } else if !detail.isEmpty {
                #expect(answer?.details == String(detail), "\(actions)")
            }
        }
    }

    @Test("a listed host outside the CA's names gets 403 until the CA is issued again")
    func outsideTheScope() {
        var script = SessionScript()
        let rules = Self.rules(interception: InterceptionScope(names: ["other.example"]))
        let answer = Self.answer(script.head(Self.connectAPI, rules: rules))
        #expect(answer?.status == 403 && answer?.details == "not covered by the interception CA")
    }

    @Test("CONNECT on a gateway listener is 405")
    func gatewayRefuses() {
        var script = SessionScript(mode: .gateway(upstream: Self.api))
        #expect(Self.answer(script.head(Self.connectAPI, rules: Self.rules()))?.status == 405)
    }

    @Test("bytes behind a CONNECT head are the tunnel's, never parsed as a request")
    func pipelinedBytesAreTheTunnels() {
        var script = SessionScript()
        let head = "CONNECT unlisted.example.org:443 HTTP/1.1\r\nHost: unlisted.example.org:443\r\n\r\n"
        let smuggled = head + "GET http://denied.example/ HTTP/1.1\r\nHost: denied.example\r\n\r\n"
        let actions = script.head(smuggled, rules: Self.rules())
        let unlisted = Endpoint(host: HostName("unlisted.example.org")!, port: 443)
        #expect(actions == [.openTunnel(consumedHead: head.utf8.count, upstream: unlisted, rule: ViolationEvent.defaultPolicyRule)])
        #expect(script.feed(.tunnelOpened) == [.beginTunnel(SessionMachine.connectEstablished)])
        #expect(script.machine.state == .tunnelling)
        // Nothing the client sends now is a request head.
        #expect(script.head("GET / HTTP/1.1\r\nHost: a\r\n\r\n", rules: Self.rules()).isEmpty)
    }

    @Test("a tunnel ends with its sockets: closed cleanly, or idle for tunnel_idle", arguments: [false, true])
    func tunnelEnds(idle: Bool) {
        var script = SessionScript()
        _ = script.head("CONNECT legacy.example:443 HTTP/1.1\r\nHost: legacy.example:443\r\n\r\n", rules: Self.rules())
        _ = script.feed(.tunnelOpened)
        let end = script.feed(.tunnelClosed(idle: idle))
        #expect(end == [.close(CloseReason(idle ? .clientTimedOut : .completed, in: .tunnel))])
    }

    @Test("a tunnel whose target cannot be reached is answered like any upstream failure")
    func tunnelFailure() {
        var script = SessionScript()
        _ = script.head("CONNECT legacy.example:443 HTTP/1.1\r\nHost: legacy.example:443\r\n\r\n", rules: Self.rules())
        let answer = Self.answer(script.feed(.upstreamFailed(.refused("refused"))))
        #expect(answer?.status == 502 && answer?.error == .connectionRefused)
    }

    @Test("a failed client handshake closes without an answer (no HTTP inside a TLS handshake)")
    func clientHandshakeFails() {
        var script = SessionScript()
        _ = script.head(Self.connectAPI, rules: Self.rules())
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        let actions = script.feed(.clientTLSFailed("SNI names other.example, not api.example.com"))
        // The verified upstream kept for the first request inside is closed, not pooled.
        #expect(actions == [.releaseUpstream(reuse: false),
                            .close(CloseReason(.clientTLSFailed(Self.api.host, detail: "SNI names other.example, not api.example.com"),
                                               in: .clientHandshake))])
        // The upstream ending meanwhile answers nothing either.
        #expect(script.feed(.upstreamEnded(UpstreamEnd(.closeNotify, buffered: 0))).isEmpty)
    }

    @Test("an upstream that closes while the client handshakes is not answered inside the handshake")
    func upstreamEndsDuringClientHandshake() {
        var script = SessionScript()
        _ = script.head(Self.connectAPI, rules: Self.rules())
        _ = script.feed(.upstreamReady(pooled: false, reported: false))
        #expect(script.feed(.upstreamEnded(UpstreamEnd(.closeNotify, buffered: 0))).isEmpty)
        #expect(script.feed(.clientTLSReady) == [.readRequestHead])
    }

    @Test("requests inside go to the tunnel's origin under its rule, origin-form or absolute")
    func requestsInside() {
        for request in ["GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
                        "GET https://api.example.com/v1/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n"] {
            var script = Self.intercepted()
            let actions = script.head(request, rules: Self.rules())
            #expect(actions == [.startExchange(consumedHead: request.utf8.count, upstream: Self.api, rule: "api.example.com")],
                    "\(request)")
        }
    }

    @Test("a request inside for another host is 421; a CONNECT inside is 405")
    func misdirectedInside() {
        var script = Self.intercepted()
        let answer = Self.answer(script.head("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", rules: Self.rules()))
        #expect(answer?.status == 421)
        var nested = Self.intercepted()
        #expect(Self.answer(nested.head(Self.connectAPI, rules: Self.rules()))?.status == 405)
    }

    @Test("inside, keep-alive and pipelining run as for plain requests")
    func keepAliveInside() {
        var script = Self.intercepted()
        let get = "GET /a HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        _ = script.head(get, buffered: get.utf8.count * 2, rules: Self.rules())
        let ready = script.feed(.upstreamReady(pooled: true, reported: false))
        #expect(ready.contains(.relayResponse))
        _ = script.response("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
        let done = script.feed(.responseBody(.complete))
        #expect(done == [.nextRequest(reuseUpstream: true)], "\(done)")
        #expect(script.machine.state == .awaitingHead && script.machine.interceptedUpstream == Self.api)
    }
}

import Testing
@testable import PinproxyCore

@Suite("HostFieldMemo")
struct HostFieldMemoTests {
    /// Host values a connection may send one after another: valid and invalid,
    /// spellings of one host, ports that map or not, values one byte apart,
    /// and lengths around the inline capacity (32 bytes).
    static let values: [String] = [
        "api.example.com", "API.example.com", "api.example.com.", "api.example.com:80", "api.example.com:8443",
        "api.example.com:8443x", "api.example.co", "api.example.comm", "127.0.0.1:9001", "127.0.0.1:9002",
        "[::1]:8443", "[::1]", "::1", "", ":443", "a@b.example", "a b.example", "bad_host!.example",
        "api.example.com:65536", "api.example.com:0",
        String(repeating: "a", count: 28) + ".com",            // 32 bytes
        String(repeating: "a", count: 29) + ".com",            // 33 bytes
        String(repeating: "a", count: 28) + ".cox",            // 32 bytes, last byte differs
        String(repeating: "a", count: 64) + ".example",        // a label over 63 octets: invalid
    ]

    private static func fresh(_ value: String) -> Result<Endpoint, HTTPError> {
        Array(value.utf8).withUnsafeBytes { RequestAuthority.endpoint(bytes: $0) }
    }

    private static func described(_ result: Result<Endpoint, HTTPError>) -> String {
        switch result {
        case let .success(endpoint): return "ok \(endpoint)"
        case let .failure(error): return "\(error.status) \(error.reason)"
        }
    }

    @Test("after any value, every value gets the result a fresh parse gives", arguments: values)
    func pairsMatchAFreshParse(_ first: String) {
        for second in Self.values {
            var memo = HostFieldMemo()
            for value in [first, first, second, second, first] {
                let memoised = Array(value.utf8).withUnsafeBytes { memo.endpoint(for: $0, parse: RequestAuthority.endpoint(bytes:)) }
                #expect(Self.described(memoised) == Self.described(Self.fresh(value)), "\(first) then \(second): \(value)")
            }
        }
    }

    @Test("an equal value is not parsed again; a longer, a failed or a different one is")
    func parsesOnlyWhatItDoesNotRemember() {
        var memo = HostFieldMemo()
        var parses = 0
        func route(_ value: String) {
            _ = Array(value.utf8).withUnsafeBytes { bytes in
                memo.endpoint(for: bytes) { parses += 1; return RequestAuthority.endpoint(bytes: $0) }
            }
        }
        // The first value is kept: the loop's next client, a `Connection:
        // close` one included, sends it again.
        route("api.example.com:8443"); route("api.example.com:8443")
        #expect(parses == 1)
        route("api.example.com:8443")
        #expect(parses == 1)
        route("api.example.com:8444")
        #expect(parses == 2)
        let long = String(repeating: "b", count: 40) + ".example"
        route(long); route(long)
        #expect(parses == 4)
        route("bad host"); route("bad host")
        #expect(parses == 6)
        // The last value that parsed and fitted is still remembered.
        route("api.example.com:8444")
        #expect(parses == 6)
    }

    @Test("a session's second request with a different Host is judged afresh")
    func routerUsesTheMemoPerValue() throws {
        var memo = HostFieldMemo()
        let upstream = Endpoint(host: try #require(HostName("api.example.com")), port: 443)
        let good = try #require(HTTPTestSupport.requestHead("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"))
        let bad = try #require(HTTPTestSupport.requestHead("GET / HTTP/1.1\r\nHost: a.example:99999\r\n\r\n"))
        let other = try #require(HTTPTestSupport.requestHead("GET /x HTTP/1.1\r\nHost: b.example:8443\r\n\r\n"))
        #expect(try RequestRouter.routeForward(good, hostMemo: &memo).get().upstream.description == "a.example:443")
        #expect(throws: HTTPError.self) { try RequestRouter.routeGateway(bad, upstream: upstream, hostMemo: &memo).get() }
        #expect(throws: HTTPError.self) { try RequestRouter.routeForward(bad, hostMemo: &memo).get() }
        #expect(try RequestRouter.routeForward(other, hostMemo: &memo).get().upstream.description == "b.example:8443")
        #expect(try RequestRouter.routeForward(good, hostMemo: &memo).get().upstream.description == "a.example:443")
    }

    /// What a session did with one head, as text (its actions, the serialised
    /// upstream request's bytes included).
    private static func actions(of machine: inout SessionMachine, for text: String, rules: RequestRules,
                                buffers: inout HeadBuffers, hostMemo: inout HostFieldMemo?) -> String {
        let head = Array(text.utf8).withUnsafeBytes { RequestHeadParser.parse($0, limits: HeadLimits(), buffers: &buffers) }
        let event = SessionEvent.requestHead(head, buffered: text.utf8.count, rules: rules, draining: false)
        var actions: [SessionAction] = []
        if var memo = hostMemo {
            machine.handle(event, into: &actions, lending: &buffers, hostMemo: &memo)
            hostMemo = memo
        } else {
            machine.handle(event, into: &actions)
        }
        if SessionScript.startsExchange(actions) {
            machine.handle(.upstreamReady(pooled: true, reported: false), into: &actions)
        }
        return "\(actions) \(machine.phase)"
    }

    @Test("the sessions of one loop, forward and gateway, share its memo and act as sessions without one", arguments: values)
    func sessionsShareTheLoopMemo(_ first: String) {
        let rules = SessionScript.rules()
        var loopMemo: HostFieldMemo? = HostFieldMemo()
        var none: HostFieldMemo?
        var buffers = HeadBuffers()
        let modes: [ListenerConfiguration.Mode] = [.forward, .gateway(upstream: SessionScript.api)]
        // Each value, after `first`, on a new connection of each listener kind in turn.
        for (index, value) in ([first, first] + Self.values).enumerated() {
            let mode = modes[index % 2]
            let text = "GET /p HTTP/1.1\r\nHost: \(value)\r\n\r\n"
            var shared = SessionMachine(mode: mode)
            var alone = SessionMachine(mode: mode)
            let withMemo = Self.actions(of: &shared, for: text, rules: rules, buffers: &buffers, hostMemo: &loopMemo)
            let without = Self.actions(of: &alone, for: text, rules: rules, buffers: &buffers, hostMemo: &none)
            #expect(withMemo == without, "\(mode) after \(first): \(value)")
        }
    }
}

import Foundation
import Testing

/// DNS failures (issue 7, fault injection): a loopback resolver the test runs
/// answers NXDOMAIN, SERVFAIL or nothing at all; each gets SPEC §3's
/// `502 dns_error`, and the same daemon then serves a name it can resolve.
@Suite("Fault injection: DNS", .serialized)
struct DNSFaultTests {
    /// A name that only the test's DNS server is asked about (no `resolve`
    /// entry, not in /etc/hosts).
    static let unresolvable = "upstream.pinproxy-dns-fault.example"

    /// A daemon whose resolver is `dns`, with the FaultBed-style good upstream
    /// reachable through a `resolve` override (no DNS query needed).
    private func run(_ behaviour: E2EDNSServer.Answer) throws -> (result: Curl.Result, seconds: Double) {
        let world = try TestWorld()
        let dns = world.adopt(try E2EDNSServer(answer: behaviour, directory: world.directory.path))
        let good = try world.startUpstream(resolving: ["api.example.com:8443"])
        world.configuration.timeouts = #""shutdown": "1s","#
        world.configuration.threads = 2
        try world.startProxy(environment: dns.environment)
        let start = ContinuousClock.now
        let result = try Curl.run(world.proxyArguments + ["http://\(Self.unresolvable)/bytes/10"], timeout: 15)
        let seconds = start.secondsElapsed
        // The next request: a name answered by the `resolve` override.
        let next = try Curl.run(world.proxyArguments + ["http://api.example.com:8443/bytes/1000"], timeout: 10)
        #expect(next.status == 200)
        #expect(next.body == TestUpstream.pattern(1000))
        // And the failing name again: the failure is not cached into a hang.
        let again = try Curl.run(world.proxyArguments + ["http://\(Self.unresolvable)/bytes/10"], timeout: 15)
        #expect(again.status == 502)
        #expect(again.header("proxy-status") == "pinproxy; error=dns_error")
        // No client session is left behind by the failed lookups.
        let left = DaemonSocketCensus.waitUntilEmpty(listenerPorts: [world.forwardPort, world.gatewayPort],
                                                     upstreamPort: good.port, pooled: 2)
        #expect(left.clientSessions == 0, "left: \(left)")
        return (result, seconds)
    }

    @Test("an NXDOMAIN answer is 502 dns_error at once")
    func nxdomain() throws {
        let (result, seconds) = try run(.nxdomain)
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == "pinproxy; error=dns_error")
        #expect(seconds < 2, "answered after \(seconds) s")
    }

    @Test("a SERVFAIL answer is 502 dns_error")
    func servfail() throws {
        let (result, seconds) = try run(.servfail)
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == "pinproxy; error=dns_error")
        // evdns may retry SERVFAIL on the same server; still well under the timeout path.
        #expect(seconds < 6, "answered after \(seconds) s")
    }

    @Test("a resolver that never answers is 502 dns_error after the resolver gives up (2 s x 2 attempts)")
    func silentResolver() throws {
        let (result, seconds) = try run(.silent)
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == "pinproxy; error=dns_error")
        #expect(seconds >= 3.5 && seconds < 15, "answered after \(seconds) s")
    }
}

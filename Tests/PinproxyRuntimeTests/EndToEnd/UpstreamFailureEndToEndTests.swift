import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// What the client sees when the upstream cannot be reached or fails the
/// default evaluation: curl → pinproxy (in process) → a real TLS server on
/// loopback, each test with its own PKI, server and proxy. Every rejected
/// server must have received zero application bytes (SPEC §2.3: the verdict
/// comes during the handshake, before the request is written).
@Suite("Upstream failures end to end", .serialized)
struct UpstreamFailureEndToEndTests {
    @Test("a chain from a root outside the trust store is blocked: 502 chain_untrusted, nothing relayed")
    func untrustedChain() throws {
        let served = try TestPKI.chain(rootName: "Unknown Root CA")
        let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
        let scenario = try E2EScenario(chain: served, trusting: [trusted.root.certificate])
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .chainUntrusted, rule: ViolationEvent.defaultPolicyRule,
                                 policy: .default, proxy: scenario.proxy)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("a trusted leaf for another name is blocked: 502 hostname_mismatch, nothing relayed")
    func wrongHostName() throws {
        let chain = try TestPKI.chain(names: ["DNS:other.example.org"])
        let scenario = try E2EScenario(chain: chain)
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .hostnameMismatch, rule: ViolationEvent.defaultPolicyRule,
                                 policy: .default, proxy: scenario.proxy)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("an expired leaf from a trusted root is blocked: 502 certificate_expired, nothing relayed")
    func expiredLeaf() throws {
        let chain = try TestPKI.chain(validity: .expired)
        let scenario = try E2EScenario(chain: chain)
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .certificateExpired, rule: ViolationEvent.defaultPolicyRule,
                                 policy: .default, proxy: scenario.proxy)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("a leaf that is not valid yet is blocked: 502 certificate_not_yet_valid")
    func notYetValidLeaf() throws {
        let chain = try TestPKI.chain(validity: .notYetValid)
        let scenario = try E2EScenario(chain: chain)
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .certificateNotYetValid, rule: ViolationEvent.defaultPolicyRule,
                                 policy: .default, proxy: scenario.proxy)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("the blocked event is in the log file the moment curl has the 502, for every request")
    func durableBeforeTheAnswer() throws {
        let requests = 3
        let served = try TestPKI.chain(rootName: "Unknown Root CA")
        let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
        let scenario = try E2EScenario(chain: served, trusting: [trusted.root.certificate])
        for request in 1...requests {
            let result = try scenario.get("/bytes/\(request)")
            // Read at once: SPEC §4 has the line written and fsync'ed before the 502.
            let lines = scenario.proxy.logLines()
            #expect(result.status == 502)
            #expect(lines.count == request)
            #expect(lines.last?["reason"] as? String == "chain_untrusted")
            #expect((lines.last?["request"] as? [String: Any])?["target"] as? String == "/bytes/\(request)")
        }
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(requests), count: requests)
    }

    @Test("a name the DNS server answers with an error gets 502 dns_error", arguments: [E2EDNSServer.Answer.nxdomain, .servfail])
    func dnsFailure(answer: E2EDNSServer.Answer) throws {
        let world = try TestWorld()
        let dns = world.adopt(try E2EDNSServer(answer: answer, directory: world.directory.path))
        world.configuration.trustStore = nil
        world.configuration.threads = 1
        let proxy = try world.startProxy(environment: dns.environment)
        let started = Date()
        let result = try Curl.run(world.proxyArguments + ["http://missing.pinproxy-test.example/"], timeout: 15)
        let elapsed = Date().timeIntervalSince(started)
        E2EVerdict.expectFailure(result, status: 502, error: "dns_error", proxy: proxy)
        #expect(elapsed < 10, "DNS failure answered after \(elapsed) s")
    }

    @Test("a closed port gets 502 connection_refused")
    func connectionRefused() throws {
        let world = try TestWorld()
        world.configuration.resolve(TestWorld.apiAuthority, to: ToolPaths.freePort())   // nothing listens there
        world.configuration.trustStore = nil
        world.configuration.threads = 1
        let proxy = try world.startProxy()
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/"], timeout: 15)
        E2EVerdict.expectFailure(result, status: 502, error: "connection_refused", proxy: proxy)
    }

    @Test("a server that never answers the ClientHello gets 504 connection_timeout after timeouts.handshake")
    func stalledHandshake() throws {
        let chain = try TestPKI.chain()
        let scenario = try E2EScenario(chain: chain,
                                       config: #""timeouts": { "handshake": "1s" },"#,
                                       upstreamArguments: ["--stall-handshake"])
        let started = Date()
        let result = try scenario.get()
        let elapsed = Date().timeIntervalSince(started)
        E2EVerdict.expectFailure(result, status: 504, error: "connection_timeout", proxy: scenario.proxy)
        #expect(elapsed >= 0.9 && elapsed < 5, "handshake timeout answered after \(elapsed) s")
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("min_tls_version 1.3 against a server capped at TLS 1.2 fails the handshake: 502 tls_protocol_error, no event")
    func belowTLSFloor() throws {
        let world = try TestWorld()
        let upstream = try world.startUpstream(capAtTLS12: true)
        world.configuration.threads = 1
        world.configuration.extra = #""hosts": { "api.example.com": { "policy": "default", "min_tls_version": "1.3" } },"#
        let proxy = try world.startProxy()
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 15)
        E2EVerdict.expectFailure(result, status: 502, error: "tls_protocol_error", proxy: proxy)
        E2EVerdict.expectNothingRelayed(upstream.waitForConnections(1))
    }

    @Test("the same TLS 1.2 server is accepted with the default floor, so the cap alone is not the failure")
    func tls12AcceptedByDefault() throws {
        let world = try TestWorld()
        try world.startUpstream(capAtTLS12: true)
        world.configuration.threads = 1
        let proxy = try world.startProxy()
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 15)
        #expect(result.status == 200)
        #expect(result.body == Data((0..<10).map { UInt8($0) }))
        E2EVerdict.expectNoEvent(proxy: proxy)
    }

    @Test("require_forward_secrecy (default) refuses a TLS 1.2 server offering only RSA key exchange: 502 tls_protocol_error, no event")
    func noForwardSecrecy() throws {
        // AES128-GCM-SHA256 is TLS_RSA_WITH_AES_128_GCM_SHA256: no ECDHE, so an RSA leaf.
        let world = try TestWorld(chain: try TestPKI.chain(.rsa2048))
        let upstream = try world.startUpstream(arguments: ["--ciphers", "AES128-GCM-SHA256"], capAtTLS12: true)
        world.configuration.threads = 1
        let proxy = try world.startProxy()
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 15)
        E2EVerdict.expectFailure(result, status: 502, error: "tls_protocol_error", proxy: proxy)
        E2EVerdict.expectNothingRelayed(upstream.waitForConnections(1))
    }

    @Test("with require_forward_secrecy false the same RSA-key-exchange server is accepted")
    func forwardSecrecyWaived() throws {
        let world = try TestWorld(chain: try TestPKI.chain(.rsa2048))
        try world.startUpstream(arguments: ["--ciphers", "AES128-GCM-SHA256"], capAtTLS12: true)
        world.configuration.threads = 1
        world.configuration.extra = #""hosts": { "api.example.com": { "policy": "default", "require_forward_secrecy": false } },"#
        let proxy = try world.startProxy()
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 15)
        #expect(result.status == 200)
        #expect(result.body == Data((0..<10).map { UInt8($0) }))
        E2EVerdict.expectNoEvent(proxy: proxy)
    }
}

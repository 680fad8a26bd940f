import Foundation
import Testing
@testable import PinproxyRuntime

/// `upstream_reuse`, end to end: what the upstream sees when pooling and TLS
/// session resumption are switched off (the knobs a benchmark of per-request
/// handshakes, or an operator who wants every connection verified, needs).
@Suite("upstream_reuse end to end", .serialized)
struct UpstreamReuseEndToEndTests {
    /// Upstream handshakes, and how many of them resumed a session, for five
    /// keep-alive requests of one client through a proxy with `reuse`.
    func handshakes(reuse: String) throws -> (full: Int, resumed: Int) {
        let scenario = try E2EScenario(chain: try TestPKI.chain(),
                                       config: #""upstream_reuse": \#(reuse),"#)
        let urls = (0..<5).map { "http://api.example.com/bytes/\($0 + 10)" }
        let result = try Curl.run(["-x", scenario.proxy.forwardProxy] + urls, timeout: 15)
        #expect(result.exitCode == 0 && result.status == 200)
        let stats = try scenario.upstream.stats(caFile: scenario.trustStoreFile)
        // The stats request is one full handshake of its own, made directly.
        let total = (stats["handshakes"] ?? 0) - 1
        let resumed = stats["resumed"] ?? 0
        return (total - resumed, resumed)
    }

    @Test("defaults: one upstream connection serves all five requests")
    func defaults() throws {
        let counts = try handshakes(reuse: "{}")
        #expect(counts.full + counts.resumed == 1, "\(counts)")
    }

    @Test("idle_per_host 0: a connection per request, the later ones resuming the first one's session")
    func noPooling() throws {
        let counts = try handshakes(reuse: #"{ "idle_per_host": 0 }"#)
        #expect(counts.full + counts.resumed == 5, "\(counts)")
        #expect(counts.resumed >= 3, "\(counts)")
    }

    @Test("idle_per_host 0 and tls_sessions false: five full handshakes, each verified")
    func noPoolingNoResumption() throws {
        let counts = try handshakes(reuse: #"{ "idle_per_host": 0, "tls_sessions": false }"#)
        #expect(counts == (5, 0), "\(counts)")
    }
}

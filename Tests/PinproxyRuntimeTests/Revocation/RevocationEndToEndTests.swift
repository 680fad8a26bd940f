import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// A revoked server through the daemon (SPEC §2.3, §3, §4): `curl` through
/// pinproxy in process to `openssl s_server` stapling a "revoked" OCSP
/// response: 502 `certificate_revoked` and its violation event; with
/// `enforce: false` the request is relayed and the event `reported`.
@Suite("Revocation end to end", .serialized)
struct RevocationEndToEndTests {
    /// The world, keeping the stapling server, and the in-process proxy in front of it.
    static func scenario(enforce: Bool) throws -> (TestWorld, ProxyUnderTest) {
        let world = try TestWorld()
        let pki = try RevocationPKI(directory: world.directory.path)
        let staple = try pki.ocspResponse(.revoked, name: "revoked")
        let server = try StaplingServer(leaf: pki.leafFile, intermediate: pki.intermediateFile, key: pki.keyFile,
                                        staple: staple, tlsVersion: "1.3", directory: world.directory.path)
        world.adopt(server, port: server.port, resolving: [TestWorld.apiAuthority])
        // The anchors replace any trust store: none is configured.
        world.configuration.trustStore = nil
        world.configuration.threads = 1
        world.configuration.extra = """
            "hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\(pki.rootFile)"], "enforce": \(enforce) } },
            """
        return (world, try world.startProxy())
    }

    @Test("a stapled revoked status blocks with 502 certificate_revoked and one blocked event")
    func blocked() throws {
        let (world, proxy) = try Self.scenario(enforce: true)
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/"], timeout: 15)
        E2EVerdict.expectBlocked(result, reason: .certificateRevoked, rule: "api.example.com", policy: .anchors, proxy: proxy)
        #expect(proxy.sink.events.first?.detail.hasPrefix("stapled OCSP response: the leaf certificate CN=api.example.com is revoked") == true)
        withExtendedLifetime(world) {}
    }

    @Test("report-only relays a revoked server and records the event as reported")
    func reported() throws {
        let (world, proxy) = try Self.scenario(enforce: false)
        let result = try Curl.run(world.proxyArguments + ["http://api.example.com/"], timeout: 15)
        #expect(result.status == 200)
        E2EVerdict.expectEvent(action: .reported, reason: .certificateRevoked, rule: "api.example.com", policy: .anchors,
                               proxy: proxy)
        withExtendedLifetime(world) {}
    }
}

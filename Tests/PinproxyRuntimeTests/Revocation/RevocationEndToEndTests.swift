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
    static func scenario(enforce: Bool, directory: TemporaryDirectory) throws -> (RevocationPKI, StaplingServer, ProxyUnderTest) {
        let pki = try RevocationPKI(directory: directory.path)
        let staple = try pki.ocspResponse(.revoked, name: "revoked")
        let server = try StaplingServer(leaf: pki.leafFile, intermediate: pki.intermediateFile, key: pki.keyFile,
                                        staple: staple, tlsVersion: "1.3", directory: directory.path)
        let proxy = try ProxyUnderTest(directory: directory.path, body: """
            "resolve": { "api.example.com:443": "127.0.0.1:\(server.port)" },
            "threads": 1,
            "hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\(pki.rootFile)"], "enforce": \(enforce) } },
            """)
        return (pki, server, proxy)
    }

    @Test("a stapled revoked status blocks with 502 certificate_revoked and one blocked event")
    func blocked() throws {
        let directory = try TemporaryDirectory()
        let (_, server, proxy) = try Self.scenario(enforce: true, directory: directory)
        let result = try Curl.run(["-x", proxy.forwardProxy, "http://api.example.com/"], timeout: 15)
        E2EVerdict.expectBlocked(result, reason: .certificateRevoked, rule: "api.example.com", policy: .anchors, proxy: proxy)
        #expect(proxy.sink.events.first?.detail.hasPrefix("stapled OCSP response: the leaf certificate CN=api.example.com is revoked") == true)
        withExtendedLifetime(server) {}
    }

    @Test("report-only relays a revoked server and records the event as reported")
    func reported() throws {
        let directory = try TemporaryDirectory()
        let (_, server, proxy) = try Self.scenario(enforce: false, directory: directory)
        let result = try Curl.run(["-x", proxy.forwardProxy, "http://api.example.com/"], timeout: 15)
        #expect(result.status == 200)
        E2EVerdict.expectEvent(action: .reported, reason: .certificateRevoked, rule: "api.example.com", policy: .anchors,
                               proxy: proxy)
        withExtendedLifetime(server) {}
    }
}

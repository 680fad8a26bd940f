import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// Host rules with the same TLS settings share one `SSL_CTX`, and sharing
/// never mixes their verdicts: each connection is judged by its own rule.
@Suite("TLSClientContextCache")
struct TLSClientContextCacheTests {
    private static func prepared(_ name: String, _ policy: TrustPolicy, _ contexts: TLSClientContextCache,
                                 store: TrustStore) throws -> PreparedPolicy {
        try PreparedPolicy(ruleName: name, policy: policy, trustStore: store,
                           publicSuffixes: try LimboCase.publicSuffixes(), contexts: contexts)
    }

    @Test("rules that differ only in their pins share a context; each still decides with its own pins")
    func sharedContextKeepsVerdictsApart() throws {
        let chain = try TestPKI.chain()
        let store = try TrustStore.anchors([chain.root.certificate])
        let leafPin = try #require(SPKIPin(digest: chain.leaf.certificate.facts.spkiSHA256))
        let otherPin = try SPKIPin.parse("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let contexts = TLSClientContextCache()
        let right = try Self.prepared("right", TrustPolicy(kind: .pinPublicKeys, pins: [leafPin]), contexts, store: store)
        let wrong = try Self.prepared("wrong", TrustPolicy(kind: .pinPublicKeys, pins: [otherPin]), contexts, store: store)
        #expect(right.context === wrong.context)
        #expect(contexts.count == 1)

        let server = InMemoryHandshake.Server(chain: chain.served, key: chain.leaf.key)
        let host = HostName("api.example.com")!
        // Interleaved on the one context: the second must not inherit the first's verdict.
        let accepted = right.handshake(host: host, port: 443)
        let blocked = wrong.handshake(host: host, port: 443)
        let first = try InMemoryHandshake.run(context: right.context, handshake: accepted, server: server)
        let second = try InMemoryHandshake.run(context: wrong.context, handshake: blocked, server: server)
        let third = try InMemoryHandshake.run(context: right.context, handshake: right.handshake(host: host, port: 443), server: server)
        #expect(first.completed && third.completed)
        #expect(!second.completed)
        #expect(accepted.verdict?.decision == .allow)
        #expect(blocked.verdict?.decision.reason == .pinMismatch)
    }

    @Test("each TLS setting that shapes an SSL_CTX gets its own context", arguments: [
        TrustPolicy(kind: .pinPublicKeys, minTLSVersion: .tls13),
        TrustPolicy(kind: .pinPublicKeys, requireForwardSecrecy: false),
        TrustPolicy(kind: .pinPublicKeys, ocspStapling: .off),
        TrustPolicy(kind: .disable),
    ])
    func settingsSeparate(policy: TrustPolicy) throws {
        let chain = try TestPKI.chain()
        let store = try TrustStore.anchors([chain.root.certificate])
        let contexts = TLSClientContextCache()
        let base = try Self.prepared("base", TrustPolicy(kind: .pinPublicKeys), contexts, store: store)
        let other = try Self.prepared("other", policy, contexts, store: store)
        #expect(base.context !== other.context)
        #expect(contexts.count == 2)
    }

    @Test("anchors: the same files share, other files do not")
    func anchorsSeparate() throws {
        let directory = try TemporaryDirectory()
        let first = try directory.write(TestPKI.pem(try TestPKI.chain().root.certificate), to: "a.pem")
        let second = try directory.write(TestPKI.pem(try TestPKI.chain().root.certificate), to: "b.pem")
        let store = try TrustStore.anchors([])
        let contexts = TLSClientContextCache()
        let a1 = try Self.prepared("a1", TrustPolicy(kind: .anchors, anchorFiles: [first]), contexts, store: store)
        let a2 = try Self.prepared("a2", TrustPolicy(kind: .anchors, anchorFiles: [first]), contexts, store: store)
        let b = try Self.prepared("b", TrustPolicy(kind: .anchors, anchorFiles: [second]), contexts, store: store)
        #expect(a1.context === a2.context)
        #expect(a1.context !== b.context)
        #expect(a1.context.trustStore !== b.context.trustStore)
    }
}

import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

@Suite("PeerChainBuilder")
struct PeerChainBuilderTests {
    private let host = HostName("api.example.com")!

    private func build(_ chain: TestPKI.Chain, served: [X509Certificate]? = nil, anchors: [X509Certificate]? = nil,
                       host: HostName?, pinned: [X509Certificate] = []) throws -> PeerChain {
        let served = served ?? chain.served
        let store = try TrustStore.anchors(anchors ?? [chain.root.certificate])
        return PeerChainBuilder.build(leaf: served[0], untrusted: Array(served.dropFirst()), store: store,
                                      host: host, at: nil, pinnedCertificates: pinned)
    }

    @Test("the verified chain ends at the root the server did not send", arguments: TestKey.Kind.serverKinds)
    func verifiedChainIncludesUnsentRoot(kind: TestKey.Kind) throws {
        let chain = try TestPKI.chain(kind)
        let peer = try build(chain, host: host)
        #expect(peer.chainFailure == nil)
        #expect(peer.served.map(\.subject) == ["CN=api.example.com", "CN=Test Intermediate CA"])
        #expect(peer.verified?.map(\.subject) == ["CN=api.example.com", "CN=Test Intermediate CA", "CN=Test Root CA"])
        #expect(peer.hostMatches)
    }

    @Test("the signing path follows signatures and excludes an appended unrelated certificate")
    func signingPathExcludesAppendedCertificate() throws {
        let chain = try TestPKI.chain()
        let attacker = try TestPKI.selfSigned(name: "Attacker Root", isCA: true)
        let peer = try build(chain, served: chain.served + [attacker.certificate], host: host,
                             pinned: [chain.root.certificate])
        #expect(peer.served.count == 3)
        #expect(peer.signingPath.map(\.subject) == ["CN=api.example.com", "CN=Test Intermediate CA", "CN=Test Root CA"])
    }

    @Test("a self-signed leaf is its own whole signing path and is untrusted")
    func selfSignedLeaf() throws {
        let leaf = try TestPKI.selfSigned(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"])
        let other = try TestPKI.chain()
        let peer = PeerChainBuilder.build(leaf: leaf.certificate, untrusted: [], store: try TrustStore.anchors([other.root.certificate]),
                                          host: host, at: nil, pinnedCertificates: [])
        #expect(peer.signingPath.map(\.der) == [leaf.certificate.der])
        #expect(peer.chainFailure == .untrusted(detail: "self-signed certificate"))
        #expect(peer.verified == nil)
        #expect(peer.hostMatches)
    }

    @Test("validity failures map to expired and not-yet-valid")
    func validityFailures() throws {
        #expect(try build(TestPKI.chain(validity: .expired), host: host).chainFailure == .expired)
        #expect(try build(TestPKI.chain(validity: .notYetValid), host: host).chainFailure == .notYetValid)
    }

    @Test("a validation time inside the leaf's validity accepts an expired leaf")
    func injectedTime() throws {
        let chain = try TestPKI.chain(validity: .expired)
        let peer = PeerChainBuilder.build(leaf: chain.leaf.certificate, untrusted: [chain.intermediate.certificate],
                                          store: try TrustStore.anchors([chain.root.certificate]), host: host,
                                          at: Date(timeIntervalSinceNow: -5 * 86_400), pinnedCertificates: [])
        #expect(peer.chainFailure == nil)
    }

    @Test("a chain to another root is untrusted; the anchors store accepts its own CA")
    func anchorsStore() throws {
        let chain = try TestPKI.chain()
        let attacker = try TestPKI.chain(rootName: "Test Root CA")
        #expect(try build(chain, anchors: [chain.root.certificate], host: host).chainFailure == nil)
        let rejected = try build(chain, anchors: [attacker.root.certificate], host: host)
        #expect(rejected.chainFailure == .untrusted(detail: "unable to get local issuer certificate"))
        #expect(rejected.verified == nil)
    }

    @Test("an issuer that is not a CA makes the chain untrusted")
    func nonCAIssuer() throws {
        let root = try TestPKI.selfSigned(name: "Test Root CA", isCA: true)
        let notCA = try TestPKI.issue(name: "Not A CA", isCA: false, by: root)
        let leaf = try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"], by: notCA)
        let peer = PeerChainBuilder.build(leaf: leaf.certificate, untrusted: [notCA.certificate],
                                          store: try TrustStore.anchors([root.certificate]), host: host, at: nil,
                                          pinnedCertificates: [])
        #expect(peer.chainFailure == .untrusted(detail: "invalid CA certificate"))
        // The root is neither served nor pinned, so the path stops at the non-CA issuer.
        #expect(peer.signingPath.map(\.subject) == ["CN=api.example.com", "CN=Not A CA"])
    }

    @Test("host matching uses SANs only: names, one-label wildcards and IP literals",
          arguments: [("api.example.com", true), ("API.example.com.", true), ("other.example.com", false),
                      ("a.cdn.example.com", true), ("a.b.cdn.example.com", false), ("127.0.0.1", true),
                      ("::1", true), ("127.0.0.2", false)])
    func hostMatching(name: String, matches: Bool) throws {
        let chain = try TestPKI.chain()
        #expect(try build(chain, host: HostName(name)).hostMatches == matches)
    }

    @Test("the subject common name is never used as a host name")
    func noCommonNameFallback() throws {
        let chain = try TestPKI.chain(names: ["DNS:other.example.com"])
        let peer = try build(chain, host: host)
        #expect(peer.chainFailure == nil)
        #expect(!peer.hostMatches)
    }
}

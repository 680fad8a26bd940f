import Foundation
import Testing
import COpenSSL
import PinproxyCore
@testable import PinproxyRuntime

@Suite("TLSClientContext")
struct TLSClientContextTests {
    private let host = HostName("api.example.com")!

    /// A context and handshake for `policy`, trusting `chain`'s root as the
    /// "system" store, whose check decides with `decide` over the facts.
    private func handshake(_ chain: TestPKI.Chain, policy: TrustPolicy = .standard,
                           decide: @escaping @Sendable (PeerChain) -> Bool = { $0.chainFailure == nil && $0.hostMatches })
        throws -> (TLSClientContext, UpstreamHandshake) {
        let material = try PolicyMaterial.load(for: policy)
        let context = try TLSClientContext(policy: policy, material: material,
                                           trustStore: TrustStore.anchors([chain.root.certificate]))
        let check = TrustCheck(policy: policy, evaluator: DecidingEvaluator(decide: decide))
        let handshake = UpstreamHandshake(host: host, port: 443, check: check, material: material)
        return (context, handshake)
    }

    private func server(_ chain: TestPKI.Chain) -> InMemoryHandshake.Server {
        InMemoryHandshake.Server(chain: chain.served, key: chain.leaf.key)
    }

    @Test("an accepted server completes TLS 1.3 with ALPN http/1.1 and receives the request",
          arguments: TestKey.Kind.serverKinds)
    func acceptedHandshake(kind: TestKey.Kind) throws {
        let chain = try TestPKI.chain(kind)
        let (context, handshake) = try handshake(chain)
        let outcome = try InMemoryHandshake.run(context: context, handshake: handshake, server: server(chain))
        #expect(outcome.completed)
        #expect(outcome.negotiatedVersion == "TLSv1.3")
        #expect(outcome.alpn == "http/1.1")
        #expect(outcome.serverApplicationBytes == InMemoryHandshake.request.count)
        #expect(handshake.verdict?.decision == .allow)
        #expect(handshake.verdict?.chain.verified?.count == 3)
    }

    @Test("decide = false aborts the handshake and no application byte reaches the server",
          arguments: [TLSVersionFloor.tls12, .tls13])
    func rejectionLeaksNothing(version: TLSVersionFloor) throws {
        let chain = try TestPKI.chain()
        let (context, handshake) = try handshake(chain, decide: { _ in false })
        var server = server(chain)
        server.maxVersion = version == .tls12 ? TLS1_2_VERSION : 0
        let outcome = try InMemoryHandshake.run(context: context, handshake: handshake, server: server)
        #expect(!outcome.completed)
        #expect(outcome.serverApplicationBytes == 0)
        #expect(handshake.verdict?.decision.permitsRelay == false)
        // The verdict carries the facts the check saw.
        #expect(handshake.verdict?.chain.served.first?.subject == "CN=api.example.com")
    }

    @Test("a server signed by another root is handed over as untrusted and refused")
    func untrustedServer() throws {
        let trusted = try TestPKI.chain()
        let attacker = try TestPKI.chain(rootName: "Attacker Root")
        let (context, handshake) = try handshake(trusted)
        let outcome = try InMemoryHandshake.run(context: context, handshake: handshake, server: server(attacker))
        #expect(!outcome.completed)
        #expect(outcome.serverApplicationBytes == 0)
        #expect(handshake.verdict?.chain.chainFailure == .untrusted(detail: "unable to get local issuer certificate"))
    }

    @Test("an anchors policy trusts its own CA instead of the system store")
    func anchorsPolicy() throws {
        let directory = try TemporaryDirectory()
        let corporate = try TestPKI.chain(rootName: "Corp Root")
        let system = try TestPKI.chain()
        let anchor = try directory.write(TestPKI.pem(corporate.root.certificate), to: "corp-root.pem")
        let policy = TrustPolicy(kind: .anchors, anchorFiles: [anchor])
        let (context, accepted) = try handshake(system, policy: policy)
        #expect(try InMemoryHandshake.run(context: context, handshake: accepted, server: server(corporate)).completed)
        let (_, refused) = try handshake(system, policy: policy)
        #expect(try !InMemoryHandshake.run(context: context, handshake: refused, server: server(system)).completed)
    }

    @Test("disable accepts without evaluating: its check runs, and no chain facts are gathered")
    func disablePolicy() throws {
        let chain = try TestPKI.chain(validity: .expired)
        let policy = TrustPolicy(kind: .disable)
        let material = try PolicyMaterial.load(for: policy)
        let context = try TLSClientContext(policy: policy, material: material, trustStore: TrustStore.anchors([]))
        // The production check of `disable` (PolicyEvaluation's DisabledEvaluator), not a test decision.
        let check = TrustCheck(policy: policy, material: PinMaterial(), publicSuffixes: try PublicSuffixList(text:
            "// ===BEGIN ICANN DOMAINS===\ncom\n// ===END ICANN DOMAINS===\n"))
        let handshake = UpstreamHandshake(host: host, port: 443, check: check, material: material)
        #expect(try InMemoryHandshake.run(context: context, handshake: handshake, server: server(chain)).completed)
        #expect(handshake.verdict?.decision == .allow)
        #expect(handshake.verdict?.chain.served.isEmpty == true)
    }

    @Test("min_tls_version 1.3 fails against a TLS 1.2-only server")
    func versionFloor() throws {
        let chain = try TestPKI.chain()
        let (context, handshake) = try handshake(chain, policy: TrustPolicy(kind: .default, minTLSVersion: .tls13))
        var server = server(chain)
        server.maxVersion = TLS1_2_VERSION
        let outcome = try InMemoryHandshake.run(context: context, handshake: handshake, server: server)
        #expect(!outcome.completed)
        #expect(handshake.verdict?.chain.served.count == nil)
    }

    @Test("require_forward_secrecy refuses a TLS 1.2 server offering only RSA key exchange",
          arguments: [(true, false), (false, true)])
    func forwardSecrecy(required: Bool, completes: Bool) throws {
        let chain = try TestPKI.chain(.rsa2048)
        let (context, handshake) = try handshake(chain, policy: TrustPolicy(kind: .default, requireForwardSecrecy: required))
        var server = server(chain)
        server.maxVersion = TLS1_2_VERSION
        server.cipherList = "AES128-GCM-SHA256"
        let outcome = try InMemoryHandshake.run(context: context, handshake: handshake, server: server)
        #expect(outcome.completed == completes)
        #expect(outcome.negotiatedVersion == (completes ? "TLSv1.2" : nil))
    }

    @Test("a client certificate is presented only when the policy configures one", arguments: [false, true])
    func clientCertificate(configured: Bool) throws {
        let directory = try TemporaryDirectory()
        let chain = try TestPKI.chain()
        let client = try TestPKI.issue(name: "pinproxy client", isCA: false, by: chain.intermediate)
        let credentials = ClientCredentialFiles(
            certificatePath: try directory.write(TestPKI.pem(client.certificate) + TestPKI.pem(chain.intermediate.certificate),
                                                 to: "client.pem"),
            keyPath: try directory.write(client.key.pem, to: "client.key"))
        let policy = TrustPolicy(kind: .default, clientCredentials: configured ? credentials : nil)
        let (context, handshake) = try handshake(chain, policy: policy)
        var server = server(chain)
        server.requestsClientCertificate = true
        let outcome = try InMemoryHandshake.run(context: context, handshake: handshake, server: server)
        #expect(outcome.completed)
        #expect(outcome.serverSawClientCertificate == configured)
    }

    @Test("a saved session resumes the next handshake", arguments: [TLSVersionFloor.tls12, .tls13])
    func sessionResumption(version: TLSVersionFloor) throws {
        let chain = try TestPKI.chain()
        let (context, first) = try handshake(chain)
        var sessions: [TLSSessionHandle] = []
        first.onNewSession = { sessions.append($0) }
        var server = server(chain)
        server.maxVersion = version == .tls12 ? TLS1_2_VERSION : 0
        // One server context for both handshakes, so its ticket keys and session cache are shared.
        let serverContext = try InMemoryHandshake.ServerContext(server)
        let initial = try InMemoryHandshake.run(context: context, handshake: first, server: serverContext)
        #expect(initial.completed && !initial.sessionReused)
        let saved = try #require(sessions.last)
        #expect(saved.isResumable)
        let (_, second) = try handshake(chain)
        let resumed = try InMemoryHandshake.run(context: context, handshake: second, server: serverContext, resuming: saved)
        #expect(resumed.completed)
        #expect(resumed.sessionReused)
        // A resumed session skips certificate verification: no chain is evaluated.
        #expect(second.verdict == nil)
    }
}

/// A trust evaluator that decides with a closure: the tests' hand on the handshake's verdict.
struct DecidingEvaluator: TrustEvaluator {
    let decide: @Sendable (PeerChain) -> Bool

    func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        decide(chain) ? .trusted : .failed(reason: .chainUntrusted, detail: "refused by the test")
    }
}

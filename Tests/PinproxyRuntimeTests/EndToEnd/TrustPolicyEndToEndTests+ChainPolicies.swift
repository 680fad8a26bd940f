import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

extension TrustPolicyEndToEndTests {
    /// SPEC §2.1 policies that decide the chain itself: `pin-certificates`,
    /// `anchors` in place of the trust store, and `validate_chain: false` with a
    /// pin that must still sit on the leaf's signing path.
    @Suite("pinned certificates, private anchors and validate_chain false")
    struct ChainPolicies {
        @Test("pin-certificates with the leaf's certificate file is relayed; with another leaf it is blocked")
        func pinnedCertificates() throws {
            let chain = try TestPKI.chain()
            let other = try TestPKI.chain()
            let directory = try TemporaryDirectory()
            for (pinnedLeaf, expected) in [(chain.leaf.certificate, 200), (other.leaf.certificate, 502)] {
                let file = try directory.pemFile([pinnedLeaf])
                let scenario = try E2EScenario(chain: chain, config:
                    #""hosts": { "api.example.com": { "policy": "pin-certificates", "certificates": ["\#(file)"] } },"#)
                let result = try scenario.get("/bytes/5")
                if expected == 200 {
                    #expect(result.status == 200)
                    #expect(result.body == Data((0..<5).map { UInt8($0) }))
                    E2EVerdict.expectNoEvent(proxy: scenario.proxy)
                } else {
                    E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com",
                                             policy: .pinCertificates, proxy: scenario.proxy)
                    E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
                }
            }
        }

        @Test("anchors: the real root as the only anchor is enough without the trust store; another root is chain_untrusted")
        func privateAnchors() throws {
            let chain = try TestPKI.chain(rootName: "Corp Root CA")
            let unrelated = try TestPKI.chain(rootName: "Public Root CA")
            let directory = try TemporaryDirectory()
            let realAnchor = try directory.pemFile([chain.root.certificate])
            let otherAnchor = try directory.pemFile([unrelated.root.certificate])
            let anchored = try E2EScenario(chain: chain, trusting: [unrelated.root.certificate],
                config: #""hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\#(realAnchor)"] } },"#)
            let accepted = try anchored.get("/bytes/9")
            #expect(accepted.status == 200)
            #expect(accepted.body == Data((0..<9).map { UInt8($0) }))
            E2EVerdict.expectNoEvent(proxy: anchored.proxy)

            // The trust store now holds the real root: the anchors replace it, they do not add to it.
            let misanchored = try E2EScenario(chain: chain, trusting: [chain.root.certificate],
                config: #""hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\#(otherAnchor)"] } },"#)
            let blocked = try misanchored.get("/bytes/9")
            E2EVerdict.expectBlocked(blocked, reason: .chainUntrusted, rule: "api.example.com", policy: .anchors,
                                     proxy: misanchored.proxy)
            E2EVerdict.expectNothingRelayed(misanchored.upstream.waitForConnections(1))
        }

        @Test("validate_chain false with a pin on a self-signed leaf is relayed; under the default policy it is chain_untrusted")
        func selfSignedPinnedLeaf() throws {
            let leaf = try TestPKI.selfSigned(name: "api.example.com", isCA: false, names: TestPKI.defaultNames)
            let unrelatedRoot = try TestPKI.chain(rootName: "Trusted Root CA").root.certificate
            let pinned = try E2EScenario(serving: [leaf.certificate], key: leaf.key,
                trusting: [unrelatedRoot],
                config: TrustPolicyEndToEndTests.pinnedHost([E2EScenario.pin(leaf.certificate), E2EScenario.backupPin()],
                                        extra: #", "validate_chain": false"#))
            let accepted = try pinned.get("/bytes/6")
            #expect(accepted.status == 200)
            #expect(accepted.body == Data((0..<6).map { UInt8($0) }))
            E2EVerdict.expectNoEvent(proxy: pinned.proxy)

            let unpinned = try E2EScenario(serving: [leaf.certificate], key: leaf.key,
                                           trusting: [unrelatedRoot])
            let blocked = try unpinned.get("/bytes/6")
            E2EVerdict.expectBlocked(blocked, reason: .chainUntrusted, rule: ViolationEvent.defaultPolicyRule,
                                     policy: .default, proxy: unpinned.proxy)
            E2EVerdict.expectNothingRelayed(unpinned.upstream.waitForConnections(1))
        }

        @Test("validate_chain false still needs the pin on the leaf's signing path: an appended pinned leaf is pin_mismatch")
        func unvalidatedChainNeedsSigningPath() throws {
            let real = try TestPKI.chain()
            let impostor = try TestPKI.selfSigned(name: "api.example.com", isCA: false, names: TestPKI.defaultNames)
            let scenario = try E2EScenario(
                serving: [impostor.certificate, real.leaf.certificate], key: impostor.key,
                trusting: [real.root.certificate],
                config: TrustPolicyEndToEndTests.pinnedHost([E2EScenario.pin(real.leaf.certificate), E2EScenario.backupPin()],
                                        extra: #", "validate_chain": false"#))
            let result = try scenario.get("/bytes/1")
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        }

        @Test("validate_chain false accepts an expired leaf from an untrusted root when its issuer is pinned")
        func unvalidatedExpiredButPinned() throws {
            let chain = try TestPKI.chain(validity: .expired, rootName: "Unknown Root CA")
            let unrelatedRoot = try TestPKI.chain(rootName: "Trusted Root CA").root.certificate
            let scenario = try E2EScenario(
                chain: chain, trusting: [unrelatedRoot],
                config: TrustPolicyEndToEndTests.pinnedHost([E2EScenario.pin(chain.intermediate.certificate), E2EScenario.backupPin()],
                                        extra: #", "validate_chain": false"#))
            let result = try scenario.get("/bytes/4")
            #expect(result.status == 200)
            #expect(result.body == Data([0, 1, 2, 3]))
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }
    }
}

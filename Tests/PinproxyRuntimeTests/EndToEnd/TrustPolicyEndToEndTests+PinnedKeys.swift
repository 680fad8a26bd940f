import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

extension TrustPolicyEndToEndTests {
    /// SPEC §2.1 `pin-public-keys` end to end: a host pinned to a key of its
    /// chain is relayed; a MITM whose CA the trust store trusts is blocked by the
    /// pin, with nothing relayed, however it dresses its chain.
    @Suite("pin-public-keys: pins on keys of the chain, their spellings, and what a MITM can and cannot do about them")
    struct PinnedKeys {
        /// Which certificate of the real chain a pin names.
        enum PinnedCertificate: String, CaseIterable, Sendable {
            case leaf, intermediate, root

            func certificate(of chain: TestPKI.Chain) -> X509Certificate {
                switch self {
                case .leaf: chain.leaf.certificate
                case .intermediate: chain.intermediate.certificate
                case .root: chain.root.certificate
                }
            }
        }

        @Test("a host pinned to a key of its chain (leaf, intermediate or the unsent root) plus a backup pin is relayed",
              arguments: PinnedCertificate.allCases)
        func correctlyPinned(pinned: PinnedCertificate) throws {
            let chain = try TestPKI.chain()
            let scenario = try E2EScenario(chain: chain, config: TrustPolicyEndToEndTests.pinnedHost(
                [E2EScenario.pin(pinned.certificate(of: chain)), E2EScenario.backupPin()]))
            let result = try scenario.get("/bytes/100")
            #expect(result.status == 200)
            #expect(result.body == Data((0..<100).map { UInt8($0) }))
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }

        @Test("a MITM with a CA the trust store trusts is blocked by the pin: 502 pin_mismatch, nothing relayed")
        func mitmBlocked() throws {
            let (_, scenario) = try TrustPolicyEndToEndTests.mitm(enforce: true)
            let result = try scenario.get("/bytes/100?token=secret")
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
            // SPEC §4: the query string is never logged.
            let line = scenario.proxy.logLines().first
            #expect((line?["request"] as? [String: Any])?["target"] as? String == "/bytes/100")
            #expect((line?["served_chain"] as? [[String: Any]])?.first?["issuer"] as? String == "CN=Test Intermediate CA")
            #expect((line?["known_pins"] as? [String])?.count == 2)
        }

        @Test("a POST body to a MITM is never relayed: the impostor receives zero application bytes")
        func mitmPostNothingRelayed() throws {
            let (_, scenario) = try TrustPolicyEndToEndTests.mitm(enforce: true)
            let body = scenario.world.directory.file("post.bin")
            try Data((0..<(256 << 10)).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: body))
            let result = try scenario.get("/echo-length", extra: ["--data-binary", "@\(body)"])
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            #expect((scenario.proxy.sink.events.first?.requestMethod) == "POST")
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        }

        @Test("a pinned certificate the MITM merely appends to its served chain does not match: pin_mismatch")
        func appendedPinnedCertificateIgnored() throws {
            let real = try TestPKI.chain(rootName: "Real Root CA")
            let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
            let scenario = try E2EScenario(
                serving: attacker.served + [real.intermediate.certificate], key: attacker.leaf.key,
                trusting: [real.root.certificate, attacker.root.certificate],
                config: TrustPolicyEndToEndTests.pinnedHost([E2EScenario.pin(real.intermediate.certificate), E2EScenario.backupPin()]))
            let result = try scenario.get("/bytes/1")
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            #expect(scenario.proxy.sink.events.first?.servedChain.count == 3)
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        }

        @Test("a block through the gateway listener names that listener and the client in the event")
        func gatewayBlock() throws {
            let (_, scenario) = try TrustPolicyEndToEndTests.mitm(enforce: true)
            let result = try Curl.run(["\(scenario.proxy.gatewayBase)/bytes/1"], timeout: 15)
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            let event = try #require(scenario.proxy.sink.events.first)
            #expect(event.listener == "127.0.0.1:\(scenario.proxy.gatewayPort)")
            #expect(event.clientAddress.hasPrefix("127.0.0.1:"))
            #expect(event.peerAddress == "127.0.0.1:\(scenario.upstream.port)")
            #expect(event.configGeneration == 1)
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        }

        /// The pin spellings SPEC §2.1 accepts, applied to one base64 value.
        enum PinSpelling: String, CaseIterable, Sendable {
            case okhttp, curl, hpkp

            func spell(_ pin: String) -> String {
                let base64 = String(pin.dropFirst("sha256/".count))
                switch self {
                case .okhttp: return pin
                case .curl: return "sha256//" + base64
                // Inside a JSON string: pin-sha256="<base64>".
                case .hpkp: return #"pin-sha256=\"\#(base64)\""#
                }
            }
        }

        @Test("every accepted pin spelling enforces the same pin: the right key is relayed, a wrong one blocked",
              arguments: PinSpelling.allCases)
        func pinSpellings(spelling: PinSpelling) throws {
            let chain = try TestPKI.chain()
            let other = try TestPKI.chain()
            for (pinned, relayed) in [(chain.intermediate.certificate, true), (other.intermediate.certificate, false)] {
                let scenario = try E2EScenario(chain: chain, config: TrustPolicyEndToEndTests.pinnedHost(
                    [spelling.spell(E2EScenario.pin(pinned)), E2EScenario.backupPin()]))
                let result = try scenario.get("/bytes/2")
                if relayed {
                    #expect(result.status == 200)
                    E2EVerdict.expectNoEvent(proxy: scenario.proxy)
                } else {
                    E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com",
                                             policy: .pinPublicKeys, proxy: scenario.proxy)
                }
            }
        }

        @Test("public_keys with the root's certificate file pins its key")
        func publicKeyFile() throws {
            let chain = try TestPKI.chain()
            let directory = try TemporaryDirectory()
            let file = try directory.pemFile([chain.root.certificate])
            let scenario = try E2EScenario(chain: chain, config:
                #""hosts": { "api.example.com": { "policy": "pin-public-keys", "public_keys": ["\#(file)"] } },"#)
            let result = try scenario.get("/bytes/2")
            #expect(result.status == 200)
            #expect(result.body == Data([0, 1]))
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }

        @Test("a pin set past its expires date is not enforced: wrong pins are relayed without an event")
        func expiredPinSet() throws {
            let chain = try TestPKI.chain()
            let scenario = try E2EScenario(chain: chain, config: TrustPolicyEndToEndTests.pinnedHost(
                [E2EScenario.backupPin(), E2EScenario.backupPin()], extra: #", "expires": "2020-01-01""#))
            let result = try scenario.get("/bytes/8")
            #expect(result.status == 200)
            #expect(result.body == Data((0..<8).map { UInt8($0) }))
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }

        @Test("an expired pin set still validates the chain: an untrusted server is blocked as chain_untrusted")
        func expiredPinSetStillValidatesChain() throws {
            let served = try TestPKI.chain(rootName: "Unknown Root CA")
            let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
            let scenario = try E2EScenario(chain: served, trusting: [trusted.root.certificate],
                config: TrustPolicyEndToEndTests.pinnedHost([E2EScenario.pin(served.leaf.certificate), E2EScenario.backupPin()],
                                        extra: #", "expires": "2020-01-01""#))
            let result = try scenario.get("/bytes/8")
            E2EVerdict.expectBlocked(result, reason: .chainUntrusted, rule: "api.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        }
    }
}

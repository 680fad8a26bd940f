import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The trust policies of SPEC §2.1–2.3 against real TLS servers: pins, pinned
/// certificates, private anchors, report-only, `disable`, `deny`, self-signed
/// pinned leaves, expired pin sets and wildcard rules. Each test has its own
/// PKI, server and proxy; every blocked server must have received zero
/// application bytes.
@Suite("Trust policies end to end", .serialized)
struct TrustPolicyEndToEndTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

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

    /// A `pin-public-keys` entry for api.example.com with `pins` and extra keys.
    static func pinnedHost(_ pins: [String], extra: String = "", key: String = "api.example.com") -> String {
        let list = pins.map { "\"\($0)\"" }.joined(separator: ", ")
        return #""hosts": { "\#(key)": { "policy": "pin-public-keys", "pins": [\#(list)]\#(extra) } },"#
    }

    @Test("a host pinned to a key of its chain (leaf, intermediate or the unsent root) plus a backup pin is relayed",
          arguments: PinnedCertificate.allCases)
    func correctlyPinned(pinned: PinnedCertificate) throws {
        let chain = try TestPKI.chain()
        let scenario = try E2EScenario(directory: directory, chain: chain, config: Self.pinnedHost(
            [E2EScenario.pin(pinned.certificate(of: chain)), E2EScenario.backupPin()]))
        let result = try scenario.get("/bytes/100")
        #expect(result.status == 200)
        #expect(result.body == Data((0..<100).map { UInt8($0) }))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }

    /// The MITM of SPEC §2.1: an attacker whose CA the trust store also trusts
    /// serves a valid chain for api.example.com; only the pin tells them apart.
    private func mitm(enforce: Bool) throws -> (real: TestPKI.Chain, scenario: E2EScenario) {
        let real = try TestPKI.chain(rootName: "Real Root CA")
        let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        let scenario = try E2EScenario(
            directory: directory, chain: attacker,
            trusting: [real.root.certificate, attacker.root.certificate],
            config: Self.pinnedHost([E2EScenario.pin(real.intermediate.certificate), E2EScenario.backupPin()],
                                    extra: enforce ? "" : #", "enforce": false"#))
        return (real, scenario)
    }

    @Test("a MITM with a CA the trust store trusts is blocked by the pin: 502 pin_mismatch, nothing relayed")
    func mitmBlocked() throws {
        let (_, scenario) = try mitm(enforce: true)
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
        let (_, scenario) = try mitm(enforce: true)
        let body = directory.path + "/post.bin"
        try Data((0..<(256 << 10)).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: body))
        let result = try scenario.get("/echo-length", extra: ["--data-binary", "@\(body)"])
        E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                 proxy: scenario.proxy)
        #expect((scenario.proxy.sink.events.first?.requestMethod) == "POST")
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("the same MITM with enforce false is relayed and reported")
    func mitmReportOnly() throws {
        let (_, scenario) = try mitm(enforce: false)
        let result = try scenario.get("/bytes/100")
        #expect(result.status == 200)
        #expect(result.body == Data((0..<100).map { UInt8($0) }))
        #expect(result.header("proxy-status") == nil)
        E2EVerdict.expectEvent(action: .reported, reason: .pinMismatch, rule: "api.example.com",
                               policy: .pinPublicKeys, proxy: scenario.proxy)
    }

    @Test("report-only covers chain failures too: an untrusted server is relayed and reported as chain_untrusted")
    func chainFailureReportOnly() throws {
        let served = try TestPKI.chain(rootName: "Unknown Root CA")
        let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
        let scenario = try E2EScenario(directory: directory, chain: served, trusting: [trusted.root.certificate],
                                       config: #""hosts": { "api.example.com": { "policy": "default", "enforce": false } },"#)
        let result = try scenario.get("/bytes/7")
        #expect(result.status == 200)
        #expect(result.body == Data((0..<7).map { UInt8($0) }))
        E2EVerdict.expectEvent(action: .reported, reason: .chainUntrusted, rule: "api.example.com",
                               policy: .default, proxy: scenario.proxy)
    }

    @Test("pin-certificates with the leaf's certificate file is relayed; with another leaf it is blocked")
    func pinnedCertificates() throws {
        let chain = try TestPKI.chain()
        let other = try TestPKI.chain()
        for (pinnedLeaf, expected) in [(chain.leaf.certificate, 200), (other.leaf.certificate, 502)] {
            let file = try directory.pemFile([pinnedLeaf])
            let scenario = try E2EScenario(directory: directory, chain: chain, config:
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
        let realAnchor = try directory.pemFile([chain.root.certificate])
        let otherAnchor = try directory.pemFile([unrelated.root.certificate])
        let anchored = try E2EScenario(directory: directory, chain: chain, trusting: [unrelated.root.certificate],
            config: #""hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\#(realAnchor)"] } },"#)
        let accepted = try anchored.get("/bytes/9")
        #expect(accepted.status == 200)
        #expect(accepted.body == Data((0..<9).map { UInt8($0) }))
        E2EVerdict.expectNoEvent(proxy: anchored.proxy)

        // The trust store now holds the real root: the anchors replace it, they do not add to it.
        let misanchored = try E2EScenario(directory: directory, chain: chain, trusting: [chain.root.certificate],
            config: #""hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\#(otherAnchor)"] } },"#)
        let blocked = try misanchored.get("/bytes/9")
        E2EVerdict.expectBlocked(blocked, reason: .chainUntrusted, rule: "api.example.com", policy: .anchors,
                                 proxy: misanchored.proxy)
        E2EVerdict.expectNothingRelayed(misanchored.upstream.waitForConnections(1))
    }

    @Test("disable relays to a server no trust store trusts, without an event")
    func disabled() throws {
        let served = try TestPKI.chain(names: ["DNS:elsewhere.example.org"], rootName: "Unknown Root CA")
        let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
        let scenario = try E2EScenario(directory: directory, chain: served, trusting: [trusted.root.certificate],
                                       config: #""hosts": { "api.example.com": { "policy": "disable" } },"#)
        let result = try scenario.get("/bytes/3")
        #expect(result.status == 200)
        #expect(result.body == Data([0, 1, 2]))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }

    @Test("default_policy deny answers 403 http_request_denied for an unlisted host and connects nowhere")
    func denyUnlisted() throws {
        let chain = try TestPKI.chain(names: ["DNS:api.example.com", "DNS:other.example.com"])
        let scenario = try E2EScenario(directory: directory, chain: chain, config: """
            "default_policy": "deny",
            "hosts": { "api.example.com": { "policy": "default" } },
            """)
        // other.example.com would reach the same server if pinproxy connected at all.
        let denied = try Curl.run(["-x", scenario.proxy.forwardProxy, "--resolve", "other.example.com:80:127.0.0.1",
                                   "http://other.example.com/bytes/1"], timeout: 15)
        E2EVerdict.expectFailure(denied, status: 403, error: "http_request_denied", proxy: scenario.proxy)
        // The server counts connections when it accepts them: the stats request is the only one.
        #expect(try scenario.upstream.stats(caFile: scenario.trustStoreFile)["connections"] == 1)
        let listed = try scenario.get("/bytes/4")
        #expect(listed.status == 200)
        #expect(listed.body == Data([0, 1, 2, 3]))
        #expect(try scenario.upstream.stats(caFile: scenario.trustStoreFile)["connections"] == 3)
    }

    @Test("validate_chain false with a pin on a self-signed leaf is relayed; under the default policy it is chain_untrusted")
    func selfSignedPinnedLeaf() throws {
        let leaf = try TestPKI.selfSigned(name: "api.example.com", isCA: false, names: TestPKI.defaultNames)
        let unrelatedRoot = try TestPKI.chain(rootName: "Trusted Root CA").root.certificate
        let pinned = try E2EScenario(directory: directory, serving: [leaf.certificate], key: leaf.key,
            trusting: [unrelatedRoot],
            config: Self.pinnedHost([E2EScenario.pin(leaf.certificate), E2EScenario.backupPin()],
                                    extra: #", "validate_chain": false"#))
        let accepted = try pinned.get("/bytes/6")
        #expect(accepted.status == 200)
        #expect(accepted.body == Data((0..<6).map { UInt8($0) }))
        E2EVerdict.expectNoEvent(proxy: pinned.proxy)

        let unpinned = try E2EScenario(directory: directory, serving: [leaf.certificate], key: leaf.key,
                                       trusting: [unrelatedRoot])
        let blocked = try unpinned.get("/bytes/6")
        E2EVerdict.expectBlocked(blocked, reason: .chainUntrusted, rule: ViolationEvent.defaultPolicyRule,
                                 policy: .default, proxy: unpinned.proxy)
        E2EVerdict.expectNothingRelayed(unpinned.upstream.waitForConnections(1))
    }

    @Test("a pin set past its expires date is not enforced: wrong pins are relayed without an event")
    func expiredPinSet() throws {
        let chain = try TestPKI.chain()
        let scenario = try E2EScenario(directory: directory, chain: chain, config: Self.pinnedHost(
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
        let scenario = try E2EScenario(directory: directory, chain: served, trusting: [trusted.root.certificate],
            config: Self.pinnedHost([E2EScenario.pin(served.leaf.certificate), E2EScenario.backupPin()],
                                    extra: #", "expires": "2020-01-01""#))
        let result = try scenario.get("/bytes/8")
        E2EVerdict.expectBlocked(result, reason: .chainUntrusted, rule: "api.example.com", policy: .pinPublicKeys,
                                 proxy: scenario.proxy)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("a *.example.com rule applies to api.example.com: its wrong pins block with that rule named")
    func wildcardRule() throws {
        let chain = try TestPKI.chain()
        let scenario = try E2EScenario(directory: directory, chain: chain, config: Self.pinnedHost(
            [E2EScenario.backupPin(), E2EScenario.backupPin()], key: "*.example.com"))
        let result = try scenario.get("/bytes/2")
        E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "*.example.com", policy: .pinPublicKeys,
                                 proxy: scenario.proxy)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("an exact rule takes precedence over a matching wildcard rule")
    func exactRuleBeatsWildcard() throws {
        let chain = try TestPKI.chain()
        let scenario = try E2EScenario(directory: directory, chain: chain, config: """
            "hosts": {
              "*.example.com": { "policy": "pin-public-keys", "pins": ["\(E2EScenario.backupPin())", "\(E2EScenario.backupPin())"] },
              "api.example.com": { "policy": "pin-public-keys",
                                   "pins": ["\(E2EScenario.pin(chain.root.certificate))", "\(E2EScenario.backupPin())"] },
            },
            """)
        let result = try scenario.get("/bytes/2")
        #expect(result.status == 200)
        #expect(result.body == Data([0, 1]))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }

    @Test("a pinned certificate the MITM merely appends to its served chain does not match: pin_mismatch")
    func appendedPinnedCertificateIgnored() throws {
        let real = try TestPKI.chain(rootName: "Real Root CA")
        let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        let scenario = try E2EScenario(
            directory: directory, serving: attacker.served + [real.intermediate.certificate], key: attacker.leaf.key,
            trusting: [real.root.certificate, attacker.root.certificate],
            config: Self.pinnedHost([E2EScenario.pin(real.intermediate.certificate), E2EScenario.backupPin()]))
        let result = try scenario.get("/bytes/1")
        E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "api.example.com", policy: .pinPublicKeys,
                                 proxy: scenario.proxy)
        #expect(scenario.proxy.sink.events.first?.servedChain.count == 3)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("validate_chain false still needs the pin on the leaf's signing path: an appended pinned leaf is pin_mismatch")
    func unvalidatedChainNeedsSigningPath() throws {
        let real = try TestPKI.chain()
        let impostor = try TestPKI.selfSigned(name: "api.example.com", isCA: false, names: TestPKI.defaultNames)
        let scenario = try E2EScenario(
            directory: directory, serving: [impostor.certificate, real.leaf.certificate], key: impostor.key,
            trusting: [real.root.certificate],
            config: Self.pinnedHost([E2EScenario.pin(real.leaf.certificate), E2EScenario.backupPin()],
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
            directory: directory, chain: chain, trusting: [unrelatedRoot],
            config: Self.pinnedHost([E2EScenario.pin(chain.intermediate.certificate), E2EScenario.backupPin()],
                                    extra: #", "validate_chain": false"#))
        let result = try scenario.get("/bytes/4")
        #expect(result.status == 200)
        #expect(result.body == Data([0, 1, 2, 3]))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }

    @Test("*.example.com matches exactly one more label: a.b.example.com falls to the default policy and is relayed")
    func wildcardIsOneLabel() throws {
        let chain = try TestPKI.chain(names: ["DNS:api.example.com", "DNS:a.b.example.com"])
        let scenario = try E2EScenario(directory: directory, chain: chain,
                                       config: Self.pinnedHost([E2EScenario.backupPin(), E2EScenario.backupPin()],
                                                               key: "*.example.com"),
                                       resolving: ["api.example.com", "a.b.example.com"])
        let deeper = try scenario.get("/bytes/3", host: "a.b.example.com")
        #expect(deeper.status == 200)
        #expect(deeper.body == Data([0, 1, 2]))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        let matched = try scenario.get("/bytes/3")
        E2EVerdict.expectBlocked(matched, reason: .pinMismatch, rule: "*.example.com", policy: .pinPublicKeys,
                                 proxy: scenario.proxy)
    }

    @Test("a block through the gateway listener names that listener and the client in the event")
    func gatewayBlock() throws {
        let (_, scenario) = try mitm(enforce: true)
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
            let scenario = try E2EScenario(directory: directory, chain: chain, config: Self.pinnedHost(
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
        let file = try directory.pemFile([chain.root.certificate])
        let scenario = try E2EScenario(directory: directory, chain: chain, config:
            #""hosts": { "api.example.com": { "policy": "pin-public-keys", "public_keys": ["\#(file)"] } },"#)
        let result = try scenario.get("/bytes/2")
        #expect(result.status == 200)
        #expect(result.body == Data([0, 1]))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }

    @Test("a parent-domain rule reaches api.example.com with include_subdomains or as **.; without either it does not",
          arguments: [(#""example.com": { "include_subdomains": true, "#, "example.com", true),
                      (#""**.example.com": { "#, "**.example.com", true),
                      (#""example.com": { "#, "", false)])
    func parentDomainRules(opening: String, rule: String, applies: Bool) throws {
        let chain = try TestPKI.chain()
        let pins = "\"\(E2EScenario.backupPin())\", \"\(E2EScenario.backupPin())\""
        let scenario = try E2EScenario(directory: directory, chain: chain, config:
            #""hosts": { \#(opening)"policy": "pin-public-keys", "pins": [\#(pins)] } },"#)
        let result = try scenario.get("/bytes/2")
        if applies {
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: rule, policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
        } else {
            #expect(result.status == 200)
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }
    }

    @Test("min_tls_version 1.3 is met by a server that speaks TLS 1.3")
    func tls13FloorMet() throws {
        let chain = try TestPKI.chain()
        let scenario = try E2EScenario(directory: directory, chain: chain, config:
            #""hosts": { "api.example.com": { "policy": "default", "min_tls_version": "1.3" } },"#,
            upstreamArguments: ["--min-tls", "1.3"])
        let result = try scenario.get("/bytes/2")
        #expect(result.status == 200)
        #expect(result.body == Data([0, 1]))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }
}

import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

extension TrustPolicyEndToEndTests {
    /// SPEC §2.2 host matching: exact before wildcard, a wildcard covers one label,
    /// parent domains only with `include_subdomains` or `**.`; and the host
    /// policies without pins (`disable`, `deny`, `min_tls_version`).
    @Suite("which rule applies to a host, and the policies without pins (disable, deny, min_tls_version)")
    struct HostRules {
        @Test("disable relays to a server no trust store trusts, without an event")
        func disabled() throws {
            let served = try TestPKI.chain(names: ["DNS:elsewhere.example.org"], rootName: "Unknown Root CA")
            let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
            let scenario = try E2EScenario(chain: served, trusting: [trusted.root.certificate],
                                           config: #""hosts": { "api.example.com": { "policy": "disable" } },"#)
            let result = try scenario.get("/bytes/3")
            #expect(result.status == 200)
            #expect(result.body == Data([0, 1, 2]))
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }

        @Test("default_policy deny answers 403 http_request_denied for an unlisted host and connects nowhere")
        func denyUnlisted() throws {
            let chain = try TestPKI.chain(names: ["DNS:api.example.com", "DNS:other.example.com"])
            let scenario = try E2EScenario(chain: chain, config: """
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

        @Test("a *.example.com rule applies to api.example.com: its wrong pins block with that rule named")
        func wildcardRule() throws {
            let chain = try TestPKI.chain()
            let scenario = try E2EScenario(chain: chain, config: TrustPolicyEndToEndTests.pinnedHost(
                [E2EScenario.backupPin(), E2EScenario.backupPin()], key: "*.example.com"))
            let result = try scenario.get("/bytes/2")
            E2EVerdict.expectBlocked(result, reason: .pinMismatch, rule: "*.example.com", policy: .pinPublicKeys,
                                     proxy: scenario.proxy)
            E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        }

        @Test("an exact rule takes precedence over a matching wildcard rule")
        func exactRuleBeatsWildcard() throws {
            let chain = try TestPKI.chain()
            let scenario = try E2EScenario(chain: chain, config: """
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

        @Test("*.example.com matches exactly one more label: a.b.example.com falls to the default policy and is relayed")
        func wildcardIsOneLabel() throws {
            let chain = try TestPKI.chain(names: ["DNS:api.example.com", "DNS:a.b.example.com"])
            let scenario = try E2EScenario(chain: chain,
                                           config: TrustPolicyEndToEndTests.pinnedHost([E2EScenario.backupPin(), E2EScenario.backupPin()],
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

        @Test("a parent-domain rule reaches api.example.com with include_subdomains or as **.; without either it does not",
              arguments: [(#""example.com": { "include_subdomains": true, "#, "example.com", true),
                          (#""**.example.com": { "#, "**.example.com", true),
                          (#""example.com": { "#, "", false)])
        func parentDomainRules(opening: String, rule: String, applies: Bool) throws {
            let chain = try TestPKI.chain()
            let pins = "\"\(E2EScenario.backupPin())\", \"\(E2EScenario.backupPin())\""
            let scenario = try E2EScenario(chain: chain, config:
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
            let scenario = try E2EScenario(chain: chain, config:
                #""hosts": { "api.example.com": { "policy": "default", "min_tls_version": "1.3" } },"#,
                upstreamArguments: ["--min-tls", "1.3"])
            let result = try scenario.get("/bytes/2")
            #expect(result.status == 200)
            #expect(result.body == Data([0, 1]))
            E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        }
    }
}

import Foundation
import Testing
@testable import PinproxyCore

/// SPEC §2.1 `"pins": "learn"` in the configuration: where it is valid, what
/// `check` warns about it, the errors around it, and the `hosts` section
/// `pinproxy pins --learned` prints back, which must load as configuration.
@Suite("Configuration: pins learned on first use")
struct LearnedPinsConfigurationTests {
    static let pin = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    @Test("\"pins\": \"learn\" on pin-public-keys loads as a learning rule with no pins, with the first-use warning")
    func learningRule() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let (configuration, warnings) = try fixture.parse(#"{ "hosts": { "api.example.com": { "policy": "pin-public-keys", "pins": "learn" } } }"#)
        let rule = try #require(configuration.policies.rules.first)
        #expect(rule.policy == TrustPolicy(kind: .pinPublicKeys, learnsPins: true))
        #expect(warnings == [ConfigurationWarning(path: #"$.hosts["api.example.com"].pins"#, message: LearnedPins.firstUseWarning)])
        #expect(LearnedPins.firstUseWarning.contains("trusted on first use"))
        #expect(LearnedPins.firstUseWarning.contains("default evaluation (the trust store and the host name)"))
    }

    @Test("a wildcard or subtree learning rule warns that one pin set covers all its names")
    func wildcardWarning() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        for key in ["*.cdn.example.com", "**.example.com"] {
            let (_, warnings) = try fixture.parse(#"{ "hosts": { "\#(key)": { "policy": "pin-public-keys", "pins": "learn" } } }"#)
            #expect(warnings.map(\.message) == [LearnedPins.firstUseWarning,
                "\"\(key)\" learns one set of pins for every name it covers, from the first of them: "
                + "the others must be served under the same issuer or key"])
        }
    }

    @Test("the learned pins live in $STATE_DIRECTORY (its first entry), else the working directory", arguments: [
        ([:], "./learned-pins.json"),
        (["STATE_DIRECTORY": "/var/lib/pinproxy"], "/var/lib/pinproxy/learned-pins.json"),
        (["STATE_DIRECTORY": "/var/lib/pinproxy/:/var/lib/other"], "/var/lib/pinproxy/learned-pins.json"),
    ] as [([String: String], String)])
    func location(environment: [String: String], path: String) throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        #expect(try fixture.parse("{}", environment: environment).0.learnedPinsPath == path)
        #expect(Configuration.builtInDefaults(environment: environment, cpuCount: 1).learnedPinsPath == path)
    }

    @Test("\"learn\" where it cannot work is an error at its path, with the fix", arguments: [
        (#"{ "hosts": { "a.com": { "policy": "default", "pins": "learn" } } }"#,
         ConfigurationProblem(path: #"$.hosts["a.com"].pins"#, line: 1,
                              message: #""pins": "learn" does not apply to policy "default""#,
                              hint: #"pins are learned on first use by policy "pin-public-keys" only: write "policy": "pin-public-keys", "pins": "learn""#)),
        (#"{ "hosts": { "a.com": { "policy": "pin-certificates", "certificates": ["@cdn.pem"], "pins": "learn" } } }"#,
         ConfigurationProblem(path: #"$.hosts["a.com"].pins"#, line: 1,
                              message: #""pins": "learn" does not apply to policy "pin-certificates""#,
                              hint: #"pins are learned on first use by policy "pin-public-keys" only: write "policy": "pin-public-keys", "pins": "learn""#)),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": "learn", "public_keys": ["@backup.pem"] } } }"#,
         ConfigurationProblem(path: #"$.hosts["a.com"].public_keys"#, line: 1,
                              message: #""public_keys" cannot be combined with "pins": "learn""#,
                              hint: #"learned pins are the whole pin set: remove "public_keys", or list the pins instead of learning them"#)),
        (#"{ "default_policy": { "policy": "pin-public-keys", "pins": "learn" } }"#,
         ConfigurationProblem(path: "$.default_policy.pins", line: 1,
                              message: #""pins": "learn" does not apply to default_policy"#,
                              hint: #"pins are learned per rule, and default_policy covers every unlisted host: add the host to "hosts" with "pins": "learn""#)),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": "Learn" } } }"#,
         ConfigurationProblem(path: #"$.hosts["a.com"].pins"#, line: 1,
                              message: #"expected an array of pins or "learn", found "Learn""#,
                              hint: #"write "pins": ["sha256/…", "sha256/…"], or "pins": "learn" to trust the host on first use"#)),
    ] as [(String, ConfigurationProblem)])
    func misplaced(text: String, expected: ConfigurationProblem) throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        #expect(fixture.problems(text) == [expected])
    }

    @Test("pins --learned's text loads as configuration: each rule as configured, \"learn\" replaced by the learned pins")
    func printedSectionLoads() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let (configuration, _) = try fixture.parse("""
        { "hosts": {
            "api.example.com": { "policy": "pin-public-keys", "pins": "learn", "include_subdomains": true, "enforce": false,
                                 "validate_host": false, "expires": "2027-06-30", "min_tls_version": "1.3",
                                 "require_forward_secrecy": false, "client_certificate": "@client.pem", "client_key": "@client.key",
                                 "report_uri": "http://127.0.0.1:9900/r", "crl_files": ["@cdn.pem"], "ocsp_stapling": "require" },
            "*.cdn.example.com": { "policy": "pin-public-keys", "pins": "learn", "validate_chain": false },
            "plain.example.com": { "policy": "pin-public-keys", "pins": "learn" },
        } }
        """)
        let leaf = try SPKIPin.parse(Self.pin)
        let issuer = try #require(SPKIPin(digest: [UInt8](repeating: 7, count: 32)))
        let document = LearnedPinsDocument(rules: [
            "api.example.com": LearnedPins(pins: [leaf, issuer], host: "v1.api.example.com", learnedAt: FakePKI.now,
                                           subjects: ["CN=v1.api.example.com\n\"policy\": \"disable\",", "CN=Issuer"]),
            "*.cdn.example.com": LearnedPins(pins: [issuer]),
            "plain.example.com": LearnedPins(pins: [leaf, issuer]),
            "gone.example.com": LearnedPins(pins: [leaf]),
        ])
        let text = LearnedHostsSection.text(document, file: "/state/learned-pins.json", rules: configuration.policies.rules)
        let (printed, _) = try fixture.parse(text)
        var expected = Dictionary(uniqueKeysWithValues: configuration.policies.rules.map { ($0.key, $0.policy) })
        for (key, learned) in document.rules {
            var policy = expected[key] ?? TrustPolicy(kind: .pinPublicKeys)
            policy.learnsPins = false
            policy.pins = learned.pins
            expected[key] = policy
        }
        #expect(Dictionary(uniqueKeysWithValues: printed.policies.rules.map { ($0.key, $0.policy) }) == expected)
        // A subject's line break cannot end its comment and smuggle in configuration.
        #expect(text.contains(#"// CN=v1.api.example.com "policy": "disable", (leaf)"#))
        #expect(text.contains("// learned from v1.api.example.com at 2026-11-30T12:00:00Z\n"))
        #expect(text.contains("// learned; no learning rule gone.example.com in the configuration\n"))
    }

    @Test("with nothing learned the text is an empty hosts section that still loads")
    func nothingLearned() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let text = LearnedHostsSection.text(LearnedPinsDocument(), file: "./learned-pins.json", rules: [])
        #expect(text.contains("// No rule has learned pins yet."))
        #expect(try fixture.parse(text).0.policies.rules.isEmpty)
    }
}

import Testing
@testable import PinproxyCore

@Suite("Configuration: warnings")
struct ConfigurationWarningTests {
    static let pin = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    static let backup = "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

    @Test("risky but legal settings warn and still load", arguments: [
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\#(pin)"] } } }"#,
         [ConfigurationWarning(path: #"$.hosts["a.com"].pins"#,
                               message: "only one pin, no backup pin: a key rotation on the server will block this host")]),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\#(pin)"], "public_keys": ["@backup.pem"] } } }"#, []),
        (#"{ "hosts": { "a.com": { "policy": "disable" } } }"#,
         [ConfigurationWarning(path: #"$.hosts["a.com"]"#, message: "policy \"disable\": no certificate evaluation at all for this host")]),
        (#"{ "hosts": { "**.com": { "policy": "default" } } }"#,
         [ConfigurationWarning(path: #"$.hosts["**.com"]"#, message: "\"**.com\" covers every name under the single label \"com\" (a public suffix?)")]),
        (#"{ "hosts": { "com": { "policy": "default", "include_subdomains": true } } }"#,
         [ConfigurationWarning(path: #"$.hosts["com"]"#, message: "\"com\" covers every name under the single label \"com\" (a public suffix?)")]),
        (#"{ "hosts": { "com": { "policy": "default" } } }"#, []),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\#(pin)", "\#(backup)"], "expires": "2026-12-20" } } }"#,
         [ConfigurationWarning(path: #"$.hosts["a.com"].expires"#,
                               message: "pins expire on 2026-12-20 (within 21 days): after that they are not enforced")]),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\#(pin)", "\#(backup)"], "expires": "2026-12-31" } } }"#, []),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\#(pin)", "\#(backup)"], "expires": "2026-11-29" } } }"#,
         [ConfigurationWarning(path: #"$.hosts["a.com"].expires"#, message: "pins expired on 2026-11-29: they are no longer enforced")]),
        (#"{ "hosts": { "a.com": { "policy": "pin-public-keys", "pins": ["\#(pin)", "\#(backup)"], "validate_chain": false } } }"#,
         [ConfigurationWarning(path: #"$.hosts["a.com"].validate_chain"#,
                               message: "validate_chain is false: trust and validity dates are not checked, only the pins")]),
        (#"{ "default_policy": { "policy": "pin-certificates", "certificates": ["@cdn.pem", "@backup.pem"] } }"#, []),
    ] as [(String, [ConfigurationWarning])])
    func warnings(text: String, expected: [ConfigurationWarning]) throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let (_, warnings) = try fixture.parse(text)
        #expect(warnings == expected)
    }

    @Test("a full policy object round-trips every key")
    func fullPolicy() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let (configuration, _) = try fixture.parse("""
        { "hosts": { "API.example.com.": {
            policy: 'pin-public-keys', pins: ['\(Self.pin)'], public_keys: ['@backup.pem'],
            validate_chain: true, validate_host: false, include_subdomains: true, enforce: false,
            expires: '2027-06-30', min_tls_version: '1.3', require_forward_secrecy: false,
            client_certificate: '@client.pem', client_key: '@client.key',
        } } }
        """)
        let rule = try #require(configuration.policies.rules.first)
        #expect(rule.key == "api.example.com")
        #expect(rule.policy == TrustPolicy(
            kind: .pinPublicKeys, pins: [try SPKIPin.parse(Self.pin)], publicKeyFiles: [fixture.path("backup.pem")],
            validateChain: true, validateHost: false, includeSubdomains: true, enforce: false,
            expires: PinExpiry(year: 2027, month: 6, day: 30), minTLSVersion: .tls13, requireForwardSecrecy: false,
            clientCredentials: ClientCredentialFiles(certificatePath: fixture.path("client.pem"),
                                                     keyPath: fixture.path("client.key"))))
        #expect(configuration.policies.lookup(try #require(HostName("v1.api.example.com"))) == .rule(rule))
    }
}

import Foundation
import Testing
@testable import PinproxyCore

@Suite("Configuration: SPEC example and defaults")
struct ConfigurationExampleTests {
    /// SPEC §2's example, with its file paths pointing into the fixture.
    static let specExample = """
    {
      "listeners": [
        // HTTP proxy: clients send absolute-form requests (http_proxy=http://127.0.0.1:8080)
        { "listen": "127.0.0.1:8080", "mode": "forward" },
        // fixed upstream: http://127.0.0.1:9001/x is fetched from https://api.example.com/x
        { "listen": "127.0.0.1:9001", "mode": "gateway", "upstream": "api.example.com:443" }
      ],
      "violation_log": "/var/log/pinproxy/violations.jsonl",
      "trust_store": "@trust.pem", // default: OpenSSL's default paths
      "default_policy": "default",   // for unlisted hosts: "default", "deny" (403), or any policy object
      "hosts": {
        "api.example.com": {
          "policy": "pin-public-keys",
          "pins": ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                   "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
          "validate_chain": true,        // default true
          "validate_host": true,         // default true
          "include_subdomains": false,   // default false
          "enforce": true,               // false = report-only: log, then relay anyway
          "expires": "2027-06-30"        // after this date pins are not enforced (chain + host still are)
        },
        "*.cdn.example.com":   { "policy": "pin-certificates", "certificates": ["@cdn.pem"] },
        "internal.example":    { "policy": "anchors", "anchors": ["@corp-root.pem"] },
        "insecure.expired-apis.com": { "policy": "disable" }
      },
      "resolve": { "api.example.com:443": "127.0.0.1:9443" }, // like curl --resolve
      "timeouts": { "connect": "5s", "handshake": "10s", "request_header": "15s", "idle": "60s" },
      "limits": { "max_header_bytes": 65536, "max_connections": 10000 },
      "threads": 0                                          // 0 = one event loop per core
    }
    """

    @Test("the SPEC §2 example parses to the expected values and warnings")
    func specExample() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let (configuration, warnings) = try fixture.parse(Self.specExample, cpuCount: 3)

        let loopback = try #require(HostName("127.0.0.1"))
        let api = try #require(HostName("api.example.com"))
        #expect(configuration.listeners == [
            ListenerConfiguration(address: Endpoint(host: loopback, port: 8080), mode: .forward),
            ListenerConfiguration(address: Endpoint(host: loopback, port: 9001),
                                  mode: .gateway(upstream: Endpoint(host: api, port: 443))),
        ])
        #expect(configuration.violationLogPath == "/var/log/pinproxy/violations.jsonl")
        #expect(configuration.trustStorePath == fixture.path("trust.pem"))
        #expect(configuration.policies.defaultPolicy == .policy(.standard))
        #expect(configuration.resolveOverrides == [Endpoint(host: api, port: 443): Endpoint(host: loopback, port: 9443)])
        #expect(configuration.timeouts.connect == .seconds(5))
        #expect(configuration.timeouts.handshake == .seconds(10))
        #expect(configuration.timeouts.requestHeader == .seconds(15))
        #expect(configuration.timeouts.idle == .seconds(60))
        #expect(configuration.timeouts.shutdown == .seconds(10))
        #expect(configuration.limits.maxHeaderBytes == 65536)
        #expect(configuration.limits.maxConnections == 10000)
        #expect(configuration.threads == 3)
        #expect(configuration.logBurst == 10)

        let expectedRules = [
            HostRule(pattern: try #require(HostPattern("api.example.com")), policy: TrustPolicy(
                kind: .pinPublicKeys,
                pins: [try SPKIPin.parse("sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="),
                       try SPKIPin.parse("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")],
                expires: PinExpiry(year: 2027, month: 6, day: 30))),
            HostRule(pattern: try #require(HostPattern("*.cdn.example.com")),
                     policy: TrustPolicy(kind: .pinCertificates, certificateFiles: [fixture.path("cdn.pem")])),
            HostRule(pattern: try #require(HostPattern("internal.example")),
                     policy: TrustPolicy(kind: .anchors, anchorFiles: [fixture.path("corp-root.pem")])),
            HostRule(pattern: try #require(HostPattern("insecure.expired-apis.com")), policy: TrustPolicy(kind: .disable)),
        ]
        #expect(configuration.policies.rules == expectedRules)
        #expect(configuration.policies.lookup(try #require(HostName("img.cdn.example.com"))) == .rule(expectedRules[1]))

        #expect(warnings == [
            ConfigurationWarning(path: "$.hosts[\"*.cdn.example.com\"].certificates",
                                 message: "only one pinned certificate, no backup: a certificate renewal will block this host"),
            ConfigurationWarning(path: "$.hosts[\"insecure.expired-apis.com\"]",
                                 message: "policy \"disable\": no certificate evaluation at all for this host"),
        ])
    }

    @Test("built-in defaults: one loopback forward listener, default policy, log in LOGS_DIRECTORY", arguments: [
        ([String: String](), "./violations.jsonl"),
        (["LOGS_DIRECTORY": "/var/log/pinproxy"], "/var/log/pinproxy/violations.jsonl"),
        (["LOGS_DIRECTORY": "/var/log/a:/var/log/b"], "/var/log/a/violations.jsonl"),
        (["LOGS_DIRECTORY": ""], "./violations.jsonl"),
    ])
    func builtInDefaults(environment: [String: String], logPath: String) throws {
        let configuration = Configuration.builtInDefaults(environment: environment, cpuCount: 6)
        #expect(configuration.listeners == [ListenerConfiguration(
            address: Endpoint(host: try #require(HostName("127.0.0.1")), port: 8080), mode: .forward)])
        #expect(configuration.violationLogPath == logPath)
        #expect(configuration.policies.defaultPolicy == .policy(.standard))
        #expect(configuration.policies.rules.isEmpty)
        #expect(configuration.threads == 6)
        #expect(configuration.logBurst == 10)
        #expect(configuration.trustStorePath == nil)
    }

    @Test("an empty object gives the built-in defaults; threads and log_burst are read")
    func emptyAndScalars() throws {
        let fixture = try ConfigurationFixture(files: [])
        defer { fixture.remove() }
        let (empty, warnings) = try fixture.parse("{}", environment: ["LOGS_DIRECTORY": "/logs"], cpuCount: 2)
        #expect(warnings.isEmpty)
        #expect(empty.violationLogPath == "/logs/violations.jsonl")
        #expect(empty.threads == 2)
        let (tuned, _) = try fixture.parse(#"{ threads: 7, log_burst: 3, default_policy: "deny" }"#)
        #expect(tuned.threads == 7)
        #expect(tuned.logBurst == 3)
        #expect(tuned.policies.defaultPolicy == .deny)
    }

    @Test("load reads a file, and names a missing one")
    func loadFromFile() throws {
        let fixture = try ConfigurationFixture(files: [])
        defer { fixture.remove() }
        try Data(#"{ "listeners": [{ "listen": "[::1]:8443" }] }"#.utf8)
            .write(to: URL(fileURLWithPath: fixture.path("pinproxy.json")))
        let (configuration, _) = try ConfigurationLoader.load(path: fixture.path("pinproxy.json"),
                                                              environment: [:], cpuCount: 1)
        #expect(configuration.listeners.map(\.address.description) == ["[::1]:8443"])

        let missing = fixture.path("absent.json")
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(path: missing, environment: [:], cpuCount: 1)
        }
        #expect(error?.description ==
            "\(missing): $: cannot read configuration file \"\(missing)\": it does not exist or is not accessible (pass --config FILE)")
    }
}

import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// Rules with the same pins and files share one loaded material within a
/// configuration generation; each rule still gets its own prepared policy,
/// found by its host and by its key, and a broken file fails every rule
/// that names it.
@Suite("PolicyMaterialCache")
struct PolicyMaterialCacheTests {
    /// A configuration of rules pinning `keys` (a PEM file) and inline pins, built as the daemon builds it.
    private static func build(_ hosts: String, in directory: TemporaryDirectory) throws -> ActiveConfiguration {
        let chain = try TestPKI.chain()
        let store = try directory.write(TestPKI.pem(chain.root.certificate), to: "root.pem")
        let text = """
        { "violation_log": "\(directory.file("v.jsonl"))", "trust_store": "\(store)", "default_policy": "deny",
          "hosts": { \(hosts) } }
        """
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: directory.file("config.json"),
                                                               environment: [:], cpuCount: 1)
        return try ActiveConfiguration(configuration: configuration, generation: 1)
    }

    private static let pinA = "sha256/" + String(repeating: "A", count: 43) + "="
    private static let pinB = "sha256/" + String(repeating: "B", count: 42) + "E="

    @Test("rules with equal pins and files share a material; others have their own; each rule keeps its own policy")
    func sharedMaterial() throws {
        let directory = try TemporaryDirectory()
        let leaf = try TestPKI.chain().leaf.certificate
        let keys = try directory.write(TestPKI.pem(leaf), to: "keys.pem")
        let active = try Self.build("""
            "a.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.pinA)"], "public_keys": ["\(keys)"] },
            "b.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.pinA)"], "public_keys": ["\(keys)"], "enforce": false },
            "**.c.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.pinB)"], "public_keys": ["\(keys)"] },
            "*.d.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.pinA)", "\(Self.pinB)"] }
            """, in: directory)
        func prepared(_ host: String) throws -> PreparedPolicy {
            let name = try #require(HostName(host))
            return try #require(active.policy(for: name), "\(host)")
        }
        let a = try prepared("a.example.com"), b = try prepared("b.example.com")
        let c = try prepared("x.c.example.com"), d = try prepared("x.d.example.com")
        #expect([a, b, c, d].map(\.ruleName) == ["a.example.com", "b.example.com", "**.c.example.com", "*.d.example.com"])
        #expect(a.material === b.material)
        #expect(a.material !== c.material && c.material !== d.material)
        #expect(!b.policy.enforce && a.policy.enforce, "sharing the material shares nothing else")
        #expect(a.configuredPins == [Self.pinA, SPKIPin(digest: leaf.facts.spkiSHA256)!.description])
        #expect(d.configuredPins == [Self.pinA, Self.pinB])
        for key in ["a.example.com", "b.example.com", "**.c.example.com", "*.d.example.com"] {
            #expect(active.policy(forRule: key)?.ruleName == key)
        }
        #expect(active.policy(forRule: "c.example.com") == nil)
        let unlisted = try #require(HostName("unlisted.example.com"))
        #expect(active.policy(for: unlisted) == nil, "default_policy deny")
        #expect(active.ruleCounters.map(\.rule) == ["a.example.com", "b.example.com", "**.c.example.com", "*.d.example.com"])
    }

    @Test("a broken public_keys file fails every rule that names it, each at its own path")
    func sharedFailure() throws {
        let directory = try TemporaryDirectory()
        let broken = try directory.write("-----BEGIN PUBLIC KEY-----\nnot base64 at all\n-----END PUBLIC KEY-----\n", to: "broken.pem")
        #expect {
            try Self.build("""
                "a.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.pinA)"], "public_keys": ["\(broken)"] },
                "b.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.pinA)"], "public_keys": ["\(broken)"] }
                """, in: directory)
        } throws: { error in
            let lines = "\(error)".split(separator: "\n").map(String.init)
            return lines.count == 2
                && lines[0].contains("$.hosts[\"a.example.com\"].public_keys[0]") && lines[0].contains(broken)
                && lines[1].contains("$.hosts[\"b.example.com\"].public_keys[0]") && lines[1].contains(broken)
                && lines[0].hasSuffix(String(lines[1].split(separator: ":").last!))
        }
    }
}

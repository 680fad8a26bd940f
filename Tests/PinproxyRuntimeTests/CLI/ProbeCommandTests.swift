import Foundation
import Testing
@testable import PinproxyRuntime

/// `pinproxy probe` run as a binary against a real TLS server: the daemon's
/// own evaluation, its verdict and exit code (SPEC §1).
@Suite struct ProbeCommandTests {
    static func config(port: UInt16, hostEntry: String, directory: TemporaryDirectory) throws -> String {
        try directory.write("""
            { "listeners": [{ "listen": "127.0.0.1:18080", "mode": "forward" }],
              "violation_log": "\(directory.path)/violations.jsonl",
              "hosts": { "api.example.com": \(hostEntry) },
              "resolve": { "api.example.com:443": "127.0.0.1:\(port)" } }
            """, to: "pinproxy.json")
    }

    @Test("a correctly pinned host is ACCEPTED (exit 0), a wrongly pinned one REJECTED with pin_mismatch (exit 1), report-only exits 0")
    func verdicts() throws {
        let directory = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: directory.path)
        let upstream = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        let leaf = UpstreamPKI.pin(pki.chain.leaf.certificate)
        let issuer = UpstreamPKI.pin(pki.chain.intermediate.certificate)
        let wrong = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

        let good = try Self.config(port: upstream.port, hostEntry: """
            { "policy": "pin-public-keys", "validate_chain": false, "pins": ["\(leaf)", "\(issuer)"] }
            """, directory: directory)
        let accepted = try PinproxyBinary.run(["probe", "api.example.com", "--config", good])
        #expect(accepted.status == 0)
        #expect(accepted.outputLines.contains("  verdict:  ACCEPTED"))
        #expect(accepted.outputLines.contains("  rule:     api.example.com"))
        #expect(accepted.outputLines.contains("  peer:     127.0.0.1:\(upstream.port)"))
        #expect(accepted.outputLines.contains("       \(leaf)"))

        let bad = try Self.config(port: upstream.port, hostEntry: """
            { "policy": "pin-public-keys", "validate_chain": false, "pins": ["\(wrong)", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] }
            """, directory: directory)
        let rejected = try PinproxyBinary.run(["probe", "api.example.com:443", "--config", bad])
        #expect(rejected.status == 1)
        #expect(rejected.outputLines.contains("  verdict:  REJECTED"))
        #expect(rejected.outputLines.contains("  reason:   pin_mismatch"))
        #expect(rejected.outputLines.contains("       \(leaf)"))
        #expect(rejected.outputLines.contains("       \(issuer)"))

        let reportOnly = try Self.config(port: upstream.port, hostEntry: """
            { "policy": "pin-public-keys", "validate_chain": false, "enforce": false, "pins": ["\(wrong)", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] }
            """, directory: directory)
        let reported = try PinproxyBinary.run(["probe", "api.example.com", "--config", reportOnly])
        #expect(reported.status == 0)
        #expect(reported.outputLines.contains("  verdict:  ACCEPTED (report-only)"))
        #expect(reported.outputLines.contains("  reason:   pin_mismatch"))

        // The system trust store does not know the test root: the default policy rejects it.
        let untrusted = try Self.config(port: upstream.port, hostEntry: #"{ "policy": "default" }"#, directory: directory)
        let chainRejected = try PinproxyBinary.run(["probe", "api.example.com", "--config", untrusted])
        #expect(chainRejected.status == 1)
        #expect(chainRejected.outputLines.contains("  reason:   chain_untrusted"))
        #expect(chainRejected.outputLines.contains("  verified chain: none (path validation failed)"))
        // No application byte reached any server: every probe stops after the handshake.
        #expect(upstream.waitForConnections(4).map(\.app_bytes) == [0, 0, 0, 0])
    }

    @Test("a host nothing listens for exits 3 with the connect failure")
    func refused() throws {
        let directory = try TemporaryDirectory()
        let port = ToolPaths.freePort()
        let file = try Self.config(port: port, hostEntry: #"{ "policy": "default" }"#, directory: directory)
        let result = try PinproxyBinary.run(["probe", "api.example.com", "--config", file])
        #expect(result.status == 3)
        #expect(result.outputLines.contains("  detail:   connection refused: 127.0.0.1:\(port): Connection refused"))
    }

    @Test("a host denied by default_policy is REJECTED (exit 1) without connecting")
    func denied() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("""
            { "listeners": [{ "listen": "127.0.0.1:18080", "mode": "forward" }],
              "violation_log": "\(directory.path)/violations.jsonl", "default_policy": "deny" }
            """, to: "deny.json")
        let result = try PinproxyBinary.run(["probe", "elsewhere.example.com", "--config", file])
        #expect(result.status == 1)
        #expect(result.outputLines == [
            "probe elsewhere.example.com:443",
            "  rule:     default_policy",
            "  verdict:  REJECTED (denied by default_policy)",
            "  detail:   no hosts key matches elsewhere.example.com and default_policy is \"deny\"",
        ])
    }
}

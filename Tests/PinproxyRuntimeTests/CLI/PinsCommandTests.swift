import Foundation
import Testing
@testable import PinproxyRuntime

/// `pinproxy pins` run as a binary: the SPKI pins of certificate files must
/// equal what the openssl CLI computes, and a live chain's pins must be the
/// served certificates' (SPEC §1).
@Suite struct PinsCommandTests {
    /// Runs a shell pipeline, returns its trimmed standard output.
    static func shell(_ command: String) throws -> String {
        let result = try ChildProcess.shell(command)
        guard result.status == 0 else { throw TestFailure("failed: \(command)\n\(result.errorOutput)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("pins --cert prints the SPKI hash the openssl CLI computes", arguments: [
        ("ec", "-newkey ec -pkeyopt ec_paramgen_curve:P-256"),
        ("rsa", "-newkey rsa:2048"),
        ("ed25519", "-newkey ed25519"),
    ])
    func certificateFile(name: String, keyOptions: String) throws {
        let directory = try TemporaryDirectory()
        let cert = directory.path + "/\(name).pem"
        _ = try Self.shell("openssl req -x509 \(keyOptions) -nodes -keyout \(directory.path)/\(name).key -out \(cert) -subj /CN=\(name).example.com -days 30")
        let expected = try Self.shell("openssl x509 -pubkey -noout -in \(cert) | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
        // DER too: the same key, the same pin.
        let der = directory.path + "/\(name).der"
        _ = try Self.shell("openssl x509 -in \(cert) -outform der -out \(der)")
        let result = try PinproxyBinary.run(["pins", "--cert", cert, der])
        #expect(result.status == 0)
        let pinLines = result.outputLines.filter { $0.hasPrefix("  pin:") }
        #expect(pinLines == ["  pin:       sha256/\(expected)", "  pin:       sha256/\(expected)"])
        #expect(result.outputLines.contains("  subject:   CN=\(name).example.com"))
        #expect(result.outputLines.contains("      \"sha256/\(expected)\", // CN=\(name).example.com"))
        #expect(result.outputLines.last == "pinproxy did not validate this chain: check it before you trust these pins.")
    }

    @Test("pins --cert on a file that holds no certificate exits 1 naming it")
    func badFile() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("hello\n", to: "hello.pem")
        let result = try PinproxyBinary.run(["pins", "--cert", file])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains(file))
    }

    @Test("pins HOST against a live server, through the config's resolve, prints leaf and issuer pins")
    func liveHost() throws {
        let directory = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: directory.path)
        let upstream = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        let config = try directory.write("""
            { "listeners": [{ "listen": "127.0.0.1:18080", "mode": "forward" }],
              "violation_log": "\(directory.path)/violations.jsonl",
              "resolve": { "api.example.com:443": "127.0.0.1:\(upstream.port)" } }
            """, to: "pinproxy.json")
        let result = try PinproxyBinary.run(["pins", "api.example.com", "--config", config])
        #expect(result.status == 0)
        let leaf = UpstreamPKI.pin(pki.chain.leaf.certificate)
        let issuer = UpstreamPKI.pin(pki.chain.intermediate.certificate)
        #expect(result.outputLines.first == "api.example.com:443 (resolve → 127.0.0.1:\(upstream.port)) served 2 certificates:")
        #expect(result.outputLines.filter { $0.hasPrefix("  pin:") } == ["  pin:       \(leaf)", "  pin:       \(issuer)"])
        #expect(result.output.contains("""
              "api.example.com": {
                "policy": "pin-public-keys",
                "pins": [
                  "\(leaf)", // CN=api.example.com
                  "\(issuer)", // CN=Test Intermediate CA (issuer)
                ]
              }
            """))
        #expect(result.outputLines.last == "pinproxy did not validate this chain: check it before you trust these pins.")
    }

    @Test("pins on a closed port exits 3 with a message naming the address")
    func refused() throws {
        let port = ToolPaths.freePort()
        let result = try PinproxyBinary.run(["pins", "127.0.0.1:\(port)"])
        #expect(result.status == 3)
        #expect(result.errorOutput.contains("127.0.0.1:\(port)"))
        #expect(result.errorOutput.contains("Connection refused"))
    }

    @Test("--learned is pins' own flag and stands alone: with a host, with --cert, or on another command it is a usage error", arguments: [
        (["pins", "--learned", "api.example.com"], "pins --learned takes no HOST[:PORT] or --cert"),
        (["pins", "--learned", "--cert", "a.pem"], "pins --learned takes no HOST[:PORT] or --cert"),
        (["probe", "api.example.com", "--learned"], "--learned is an option of pinproxy pins, not of pinproxy probe"),
    ])
    func learnedUsage(arguments: [String], message: String) throws {
        let result = try PinproxyBinary.run(arguments)
        #expect(result.status == 2)
        #expect(result.errorOutput.contains(message), "stderr:\n\(result.errorOutput)")
    }
}

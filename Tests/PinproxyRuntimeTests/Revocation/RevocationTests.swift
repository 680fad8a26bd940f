import Foundation
import Testing
@testable import PinproxyRuntime

/// SPEC §2.1 `crl_files` and `ocsp_stapling`, through `pinproxy probe`: real
/// handshakes with `openssl s_server` on loopback, the test PKI's own CRLs
/// and OCSP responses (`openssl ocsp`), the daemon's verify and status callbacks.
@Suite("Revocation")
struct RevocationTests {
    /// A config pinning api.example.com to the test root (`anchors`), reached at `port`.
    static func config(_ pki: RevocationPKI, port: UInt16, extra: String, directory: TemporaryDirectory) throws -> String {
        try directory.write("""
            { "listeners": [{ "listen": "127.0.0.1:18080", "mode": "forward" }],
              "violation_log": "\(directory.path)/violations.jsonl",
              "hosts": { "api.example.com": { "policy": "anchors", "anchors": ["\(pki.rootFile)"] \(extra) } },
              "resolve": { "api.example.com:443": "127.0.0.1:\(port)" } }
            """, to: "pinproxy-\(UUID().uuidString).json")
    }

    static func probe(_ config: String) throws -> ChildProcess.Result {
        try PinproxyBinary.run(["probe", "api.example.com", "--config", config])
    }

    @Test("a CRL that lists the leaf blocks it as certificate_revoked; one that does not lets it through")
    func crl() throws {
        let directory = try TemporaryDirectory()
        let pki = try RevocationPKI(directory: directory.path)
        let server = try StaplingServer(leaf: pki.leafFile, intermediate: pki.intermediateFile, key: pki.keyFile, staple: nil, tlsVersion: "1.3",
                                        directory: directory.path)
        let revoking = try pki.crl(revoking: [pki.chain.leaf.certificate], name: "revoking")
        let other = try TestPKI.issue(name: "other.example.com", isCA: false, by: pki.chain.intermediate)
        let clean = try pki.crl(revoking: [other.certificate], name: "clean")

        let revoked = try Self.probe(Self.config(pki, port: server.port, extra: #", "crl_files": ["\#(revoking)"]"#,
                                                 directory: directory))
        #expect(revoked.status == 1)
        #expect(revoked.outputLines.contains("  reason:   certificate_revoked"))
        #expect(revoked.outputLines.contains("  detail:   certificate CN=api.example.com is revoked by a configured CRL"))

        let accepted = try Self.probe(Self.config(pki, port: server.port, extra: #", "crl_files": ["\#(clean)"]"#,
                                                  directory: directory))
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.outputLines.contains("  verdict:  ACCEPTED"))
    }

    @Test("a CRL past its nextUpdate refuses what it covers and is a warning in check")
    func staleCRL() throws {
        let directory = try TemporaryDirectory()
        let pki = try RevocationPKI(directory: directory.path)
        let server = try StaplingServer(leaf: pki.leafFile, intermediate: pki.intermediateFile, key: pki.keyFile, staple: nil, tlsVersion: "1.2",
                                        directory: directory.path)
        let stale = try pki.crl(revoking: [], nextUpdate: -60, name: "stale")
        let config = try Self.config(pki, port: server.port, extra: #", "crl_files": ["\#(stale)"]"#, directory: directory)
        let probed = try Self.probe(config)
        #expect(probed.status == 1)
        #expect(probed.outputLines.contains("  reason:   certificate_revoked"))
        #expect(probed.outputLines.contains { $0.contains("revocation status of certificate CN=api.example.com unknown: CRL has expired") })
        let checked = try PinproxyBinary.run(["check", "--config", config])
        #expect(checked.status == 0)
        #expect(checked.errorOutput.contains("warning: $.hosts[\"api.example.com\"].crl_files: the CRL of CN=Revocation Intermediate CA is past its nextUpdate"))
    }

    /// One stapling case: what the server staples, the policy's mode, whether the leaf is must-staple, and the verdict.
    struct StapleCase: CustomTestStringConvertible, Sendable {
        enum Staple: Sendable { case none, good, revoked, forged }
        var staple: Staple
        var mode: String?
        var mustStaple = false
        var tlsVersion: String
        var revokedReason: Bool
        var testDescription: String {
            "TLS \(tlsVersion), staple \(staple), ocsp_stapling \(mode ?? "(default check)")\(mustStaple ? ", must-staple leaf" : "") → \(revokedReason ? "certificate_revoked" : "accepted")"
        }
    }

    static let stapleCases: [StapleCase] = ["1.2", "1.3"].flatMap { version in [
        StapleCase(staple: .good, mode: nil, tlsVersion: version, revokedReason: false),
        StapleCase(staple: .revoked, mode: nil, tlsVersion: version, revokedReason: true),
        StapleCase(staple: .none, mode: nil, tlsVersion: version, revokedReason: false),
        StapleCase(staple: .forged, mode: nil, tlsVersion: version, revokedReason: false),
        StapleCase(staple: .none, mode: "require", tlsVersion: version, revokedReason: true),
        StapleCase(staple: .forged, mode: "require", tlsVersion: version, revokedReason: true),
        StapleCase(staple: .good, mode: "require", tlsVersion: version, revokedReason: false),
        StapleCase(staple: .revoked, mode: "off", tlsVersion: version, revokedReason: false),
        StapleCase(staple: .none, mode: nil, mustStaple: true, tlsVersion: version, revokedReason: true),
        StapleCase(staple: .good, mode: nil, mustStaple: true, tlsVersion: version, revokedReason: false),
    ] }

    @Test("a stapled OCSP response is verified: revoked blocks, require and must-staple need a good one",
          arguments: stapleCases)
    func stapling(_ row: StapleCase) throws {
        let directory = try TemporaryDirectory()
        let pki = try RevocationPKI(directory: directory.path, mustStaple: row.mustStaple)
        var staple: String?
        switch row.staple {
        case .none: staple = nil
        case .good: staple = try pki.ocspResponse(.good, name: "good")
        case .revoked: staple = try pki.ocspResponse(.revoked, name: "revoked")
        case .forged:
            // Signed by a key the intermediate never authorised.
            let forger = try TestPKI.selfSigned(name: "Revocation Intermediate CA", isCA: true)
            let certificate = try directory.write(TestPKI.pem(forger.certificate), to: "forger.pem")
            let key = try directory.write(forger.key.pem, to: "forger-key.pem")
            staple = try pki.ocspResponse(.revoked, signer: (certificate, key), name: "forged")
        }
        let server = try StaplingServer(leaf: pki.leafFile, intermediate: pki.intermediateFile, key: pki.keyFile, staple: staple,
                                        tlsVersion: row.tlsVersion, directory: directory.path)
        let mode = row.mode.map { #", "ocsp_stapling": "\#($0)""# } ?? ""
        let result = try Self.probe(Self.config(pki, port: server.port, extra: mode, directory: directory))
        if row.revokedReason {
            #expect(result.status == 1, "\(result.output)")
            #expect(result.outputLines.contains("  reason:   certificate_revoked"), "\(result.output)")
            let evidence = switch row.staple {
            case .revoked: "  detail:   stapled OCSP response: the leaf certificate CN=api.example.com is revoked at "
            case .forged: "  detail:   stapled OCSP response unusable (its signature or signer does not verify), and "
            case .none, .good: "  detail:   no stapled OCSP response, and "
            }
            #expect(result.outputLines.contains { $0.hasPrefix(evidence) }, "\(result.output)")
        } else {
            #expect(result.status == 0, "\(result.output)")
            #expect(result.outputLines.contains("  verdict:  ACCEPTED"), "\(result.output)")
        }
    }
}

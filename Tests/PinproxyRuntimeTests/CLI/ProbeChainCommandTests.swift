import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// `pinproxy probe HOST --chain FILE [--at TIME]` (SPEC §1): the configured
/// policy against a chain from a file, no connection, as a handshake would.
@Suite struct ProbeChainCommandTests {
    static let wrongPins = #"["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]"#

    @Test("a renewed chain that keeps the pinned intermediate key is ACCEPTED offline; one with new keys is REJECTED")
    func renewal() throws {
        let directory = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: directory.path)
        let pinned = UpstreamPKI.pin(pki.chain.intermediate.certificate)
        let config = try ProbeCommandTests.config(port: 9, hostEntry: """
            { "policy": "pin-public-keys", "pins": ["\(pinned)", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
              "validate_chain": false }
            """, directory: directory)
        // The renewal: a new leaf key under the same intermediate.
        let renewed = try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"],
                                        by: pki.chain.intermediate)
        let renewedFile = try directory.write(TestPKI.pem(renewed.certificate) + TestPKI.pem(pki.chain.intermediate.certificate),
                                              to: "renewed.pem")
        let accepted = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", renewedFile])
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.outputLines.contains("  verdict:  ACCEPTED"))
        #expect(accepted.outputLines.contains { $0.hasPrefix("  chain:    \(renewedFile) (offline, no connection; evaluated at ") })
        #expect(!accepted.outputLines.contains { $0.hasPrefix("  peer:") })
        #expect(accepted.outputLines.contains("       \(UpstreamPKI.pin(renewed.certificate))"))

        let other = try TestPKI.chain()
        let foreign = try directory.write(TestPKI.pem(other.leaf.certificate) + TestPKI.pem(other.intermediate.certificate),
                                          to: "foreign.pem")
        let rejected = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", foreign])
        #expect(rejected.status == 1)
        #expect(rejected.outputLines.contains("  reason:   pin_mismatch"))
    }

    @Test("--at evaluates at that time: after the leaf's notAfter the same chain is certificate_expired")
    func evaluationTime() throws {
        let directory = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: directory.path)
        let config = try ProbeCommandTests.config(port: 9, hostEntry: """
            { "policy": "anchors", "anchors": ["\(pki.rootFile)"] }
            """, directory: directory)
        let now = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", pki.servedChainFile])
        #expect(now.status == 0, "\(now.output)")
        // ocsp_stapling defaults to "check": offline, the staple is named as not evaluated.
        #expect(now.outputLines.contains("  not evaluated: the OCSP staple (ocsp_stapling \"check\"): only a live handshake carries one"))
        let later = RFC3339Timestamp.seconds(pki.chain.leaf.certificate.facts.notAfter.addingTimeInterval(86_400))
        let expired = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", pki.servedChainFile,
                                              "--at", later])
        #expect(expired.status == 1)
        #expect(expired.outputLines.contains("  reason:   certificate_expired"))
        #expect(expired.outputLines.contains { $0.hasSuffix("evaluated at \(later))") })
    }

    @Test("offline and live probes of the same chain and policy reach the same verdict and evidence")
    func sameAsLive() throws {
        let directory = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: directory.path)
        let upstream = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        for entry in [#"{ "policy": "anchors", "anchors": ["\#(pki.rootFile)"] }"#,
                      #"{ "policy": "default" }"#,
                      #"{ "policy": "pin-public-keys", "pins": \#(Self.wrongPins) }"#] {
            let config = try ProbeCommandTests.config(port: upstream.port, hostEntry: entry, directory: directory)
            let live = try PinproxyBinary.run(["probe", "api.example.com", "--config", config])
            let offline = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", pki.servedChainFile])
            #expect(offline.status == live.status, "\(entry)")
            let evidence = { (result: ChildProcess.Result) in
                result.outputLines.filter { $0.hasPrefix("  verdict:") || $0.hasPrefix("  reason:") || $0.hasPrefix("  detail:") }
            }
            #expect(evidence(offline) == evidence(live), "\(entry)")
        }
    }

    @Test("an unreadable chain exits 3; --at without --chain or a bad time is a usage error (2)")
    func errors() throws {
        let directory = try TemporaryDirectory()
        let config = try ProbeCommandTests.config(port: 9, hostEntry: #"{ "policy": "default" }"#, directory: directory)
        let garbage = try directory.write("not a certificate", to: "garbage.pem")
        let unreadable = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", garbage])
        #expect(unreadable.status == 3)
        #expect(unreadable.outputLines.contains("  verdict:  NO VERDICT (chain file unreadable)"))
        let noChain = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--at", "2030-01-01T00:00:00Z"])
        #expect(noChain.status == 2)
        let badTime = try PinproxyBinary.run(["probe", "api.example.com", "--config", config, "--chain", garbage, "--at", "soon"])
        #expect(badTime.status == 2)
        #expect(badTime.errorOutput.contains("--at soon: expected an RFC 3339 time"))
    }
}

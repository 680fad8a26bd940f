import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The trust policies of SPEC §2.1–2.3 against real TLS servers: pins, pinned
/// certificates, private anchors, report-only, `disable`, `deny`, self-signed
/// pinned leaves, expired pin sets and wildcard rules, in one suite per
/// concept (the extensions of this type). Each test has its own PKI, server
/// and proxy; every blocked server must have received zero application
/// bytes. Nested so the suites run one at a time, as one suite did before.
@Suite("Trust policies end to end", .serialized)
enum TrustPolicyEndToEndTests {
    /// A `pin-public-keys` entry for api.example.com with `pins` and extra keys.
    static func pinnedHost(_ pins: [String], extra: String = "", key: String = "api.example.com") -> String {
        let list = pins.map { "\"\($0)\"" }.joined(separator: ", ")
        return #""hosts": { "\#(key)": { "policy": "pin-public-keys", "pins": [\#(list)]\#(extra) } },"#
    }

    /// The MITM of SPEC §2.1: an attacker whose CA the trust store also trusts
    /// serves a valid chain for api.example.com; only the pin tells them apart.
    static func mitm(enforce: Bool) throws -> (real: TestPKI.Chain, scenario: E2EScenario) {
        let real = try TestPKI.chain(rootName: "Real Root CA")
        let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        let scenario = try E2EScenario(
            chain: attacker,
            trusting: [real.root.certificate, attacker.root.certificate],
            config: pinnedHost([E2EScenario.pin(real.intermediate.certificate), E2EScenario.backupPin()],
                               extra: enforce ? "" : #", "enforce": false"#))
        return (real, scenario)
    }
}

import Foundation
import Testing
@testable import PinproxyCore

@Suite("Status warnings and the Prometheus text (SPEC §6)")
struct StatusDocumentTests {
    static let now = Date(timeIntervalSince1970: 1_796_000_000)

    static func rule(leafIn days: Double?, onlyLeafKey: Bool, primarySeen: UInt64) -> MetricsSnapshot.Rule {
        MetricsSnapshot.Rule(
            rule: "api.example.com", requests: 3, handshakes: .init(accepted: 2),
            violations: [.init(reason: .pinMismatch, action: .blocked, count: 1)],
            pins: [.init(pin: "sha256/primary", sightings: primarySeen), .init(pin: "sha256/backup", sightings: 0)],
            leaf: days.map { .init(notAfter: now.addingTimeInterval($0 * 86_400), seenAt: now, onlyLeafKeyMatched: onlyLeafKey) })
    }

    @Test("a leaf-key-only match warns inside the 30-day renewal window and not outside it or with an issuer pin",
          arguments: [(29.0, true, true), (31.0, true, false), (5.0, false, false)])
    func leafKeyRenewal(days: Double, onlyLeafKey: Bool, warns: Bool) {
        let warnings = StatusDocument.warnings(for: Self.rule(leafIn: days, onlyLeafKey: onlyLeafKey, primarySeen: 1), now: Self.now)
        #expect(warnings.contains { $0.contains("leaf's own key") } == warns, "\(warnings)")
    }

    @Test("a primary pin never seen warns once a chain was verified; a backup never seen does not")
    func primaryNeverSeen() {
        let unseen = StatusDocument.warnings(for: Self.rule(leafIn: 200, onlyLeafKey: false, primarySeen: 0), now: Self.now)
        #expect(unseen == ["the primary pin sha256/primary has never been seen in a verified chain"])
        #expect(StatusDocument.warnings(for: Self.rule(leafIn: 200, onlyLeafKey: false, primarySeen: 4), now: Self.now).isEmpty)
        #expect(StatusDocument.warnings(for: Self.rule(leafIn: nil, onlyLeafKey: false, primarySeen: 0), now: Self.now).isEmpty,
                "no verified chain yet: nothing to compare with")
    }

    @Test("the exposition has one HELP and TYPE per family, sorted escaped labels, and integer values")
    func exposition() {
        let listener = MetricsSnapshot.Listener(name: "127.0.0.1:8080", mode: "forward", accepted: 4, responses: [0, 3, 0, 1, 0],
                                                intercepted: 1, tunnelled: 0, refusedConnects: 0, denied: 1)
        var rule = Self.rule(leafIn: 10, onlyLeafKey: true, primarySeen: 1)
        rule.rule = #"we"ird\key"#
        let snapshot = MetricsSnapshot(version: "1.2.3", generation: 2, startedAt: Self.now, activeConnections: 1,
                                       listeners: [listener], rules: [rule], idleUpstreamConnections: 2, violationLogQueued: 0,
                                       violationLogWriteErrors: 0, violationLogDropped: 0, interceptionCAExpiry: nil)
        let text = PrometheusExposition.render(snapshot, openSSL: "OpenSSL 3", libevent: "2.1")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"pinproxy_responses_total{class="2xx",listener="127.0.0.1:8080",mode="forward"} 3"#))
        #expect(lines.contains(#"pinproxy_violations_total{action="blocked",reason="pin_mismatch",rule="we\"ird\\key"} 1"#))
        #expect(lines.contains("pinproxy_config_generation 2"))
        #expect(!text.contains("pinproxy_interception_ca_expiry"), "no CA, no series")
        let types = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(Set(types).count == types.count, "each family typed once")
        for line in lines where !line.hasPrefix("#") {
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            #expect(types.contains(Substring(name)), "\(name) has a TYPE line")
        }
    }
}

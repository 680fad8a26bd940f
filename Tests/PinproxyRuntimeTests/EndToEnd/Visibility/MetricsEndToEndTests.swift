import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §6 end to end: a mixed run through two event loops — pinned,
/// blocked, reported, denied, intercepted, tunnelled and refused traffic —
/// then `/metrics` scraped and parsed, and `pinproxy status` run as a user
/// would, with the exact counts each kind of traffic must leave.
@Suite("Metrics and status after a mixed run (admin listener)")
struct MetricsEndToEndTests {
    let real: TestPKI.Chain
    let proxy: ProxyUnderTest
    let caRoot: String
    let configFile: String
    let world: TestWorld

    init() throws {
        world = try TestWorld()
        real = try TestPKI.chain(names: ["DNS:api.example.com", "DNS:report.example.com", "DNS:tunnel.example.com"], rootName: "Real Root CA")
        let attacker = try TestPKI.chain(names: ["DNS:mitm.example.com"], rootName: "Attacker Root CA")
        try world.startUpstream(serving: real.served, key: real.leaf.key,
                                resolving: ["api.example.com:443", "report.example.com:443", "tunnel.example.com:443"])
        try world.startUpstream(serving: attacker.served, key: attacker.leaf.key, resolving: ["mitm.example.com:443"])
        world.configuration.trustStore = try world.directory.pemFile([real.root.certificate, attacker.root.certificate])
        let caDirectory = world.directory.file("ca")
        _ = try InterceptionAuthority.create(in: caDirectory, for: InterceptionScope(
            names: ["api.example.com", "mitm.example.com", "report.example.com"]))
        caRoot = caDirectory + "/root.pem"
        let intermediatePin = E2EScenario.pin(real.intermediate.certificate)
        world.configuration.threads = 2
        world.configuration.extra = """
        "admin": { "listen": "127.0.0.1:\(ToolPaths.freePort())" },
        "interception": { "ca_dir": "\(caDirectory)" },
        "default_policy": "deny",
        "hosts": {
          "api.example.com": { "policy": "pin-public-keys", "pins": ["\(intermediatePin)", "\(Self.backupPin)"] },
          "mitm.example.com": { "policy": "pin-public-keys", "pins": ["\(intermediatePin)", "\(Self.backupPin)"],
                                "expires": "\(Self.inTenDays)" },
          "report.example.com": { "policy": "pin-public-keys", "pins": ["\(Self.backupPin)", "\(E2EScenario.backupPin())"], "enforce": false },
          "tunnel.example.com": { "policy": "disable" }
        },
        """
        proxy = try world.startProxy()
        configFile = try world.writeConfiguration(name: "status.json")
    }

    static let backupPin = E2EScenario.backupPin()
    /// An `expires` date inside the 30-day notice: a drift warning.
    static let inTenDays: String = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(10 * 86_400))
    }()

    private func fetch(_ url: String, extra: [String] = []) throws -> Curl.Result {
        try Curl.run(["-x", proxy.forwardProxy] + extra + [url], timeout: 20)
    }

    /// The traffic, and what each part must be answered.
    private func mixedRun() throws {
        for _ in 0..<3 { #expect(try fetch("http://api.example.com/bytes/10").status == 200) }
        #expect(try fetch("http://mitm.example.com/bytes/10").status == 502)
        #expect(try fetch("http://report.example.com/bytes/10").status == 200)
        #expect(try fetch("http://denied.example.org/").status == 403)
        #expect(try fetch("https://api.example.com/bytes/10", extra: ["--cacert", caRoot]).status == 200)
        let rootFile = try world.directory.pemFile([real.root.certificate])
        #expect(try fetch("https://tunnel.example.com/bytes/10", extra: ["--cacert", rootFile]).status == 200)
        let refused = try fetch("https://denied.example.org/", extra: ["--cacert", rootFile])
        #expect(refused.exitCode != 0)
        // The reported event is written after its response: wait for it, so the counts are final.
        #expect(eventually { proxy.sink.events.count == 2 })
    }

    @Test("every counter of the mixed run has its exact value, summed over both loops")
    func exactCounts() throws {
        try mixedRun()
        let address = try #require(proxy.daemon.adminAddress)
        let metrics = try MetricsScrape.fetch(address)
        #expect(metrics.malformed.isEmpty, "\(metrics.malformed)")
        let listener = ["listener": "127.0.0.1:\(proxy.forwardPort)", "mode": "forward"]
        func at(_ extra: [String: String]) -> [String: String] { listener.merging(extra) { $1 } }

        #expect(metrics["pinproxy_connections_accepted_total", listener] == 9)
        // 3 + report + the intercepted CONNECT's 200 and its inner request's + the tunnel's 200.
        #expect(metrics["pinproxy_responses_total", at(["class": "2xx"])] == 7)
        #expect(metrics["pinproxy_responses_total", at(["class": "4xx"])] == 2)
        #expect(metrics["pinproxy_responses_total", at(["class": "5xx"])] == 1)
        #expect(metrics["pinproxy_connect_total", at(["outcome": "intercepted"])] == 1)
        #expect(metrics["pinproxy_connect_total", at(["outcome": "tunnelled"])] == 1)
        #expect(metrics["pinproxy_connect_total", at(["outcome": "refused"])] == 1)
        #expect(metrics["pinproxy_denied_total", listener] == 2)

        #expect(metrics["pinproxy_rule_requests_total", ["rule": "api.example.com"]] == 5)
        #expect(metrics["pinproxy_rule_requests_total", ["rule": "mitm.example.com"]] == 1)
        #expect(metrics["pinproxy_rule_requests_total", ["rule": "report.example.com"]] == 1)
        #expect(metrics["pinproxy_rule_requests_total", ["rule": "tunnel.example.com"]] == 1)
        #expect(metrics["pinproxy_upstream_handshakes_total", ["rule": "mitm.example.com", "outcome": "blocked"]] == 1)
        #expect(metrics["pinproxy_upstream_handshakes_total", ["rule": "report.example.com", "outcome": "reported"]] == 1)
        #expect(metrics["pinproxy_violations_total", ["rule": "mitm.example.com", "reason": "pin_mismatch", "action": "blocked"]] == 1)
        #expect(metrics["pinproxy_violations_total", ["rule": "report.example.com", "reason": "pin_mismatch", "action": "reported"]] == 1)
        #expect(metrics["pinproxy_violations_total", ["rule": "api.example.com", "reason": "pin_mismatch", "action": "blocked"]] == nil)

        // Which loop took which connection is the kernel's choice; the relations are not.
        let accepted = try #require(metrics["pinproxy_upstream_handshakes_total", ["rule": "api.example.com", "outcome": "accepted"]])
        let resumed = try #require(metrics["pinproxy_upstream_handshakes_resumed_total", ["rule": "api.example.com"]])
        #expect((1...5).contains(accepted))
        #expect(metrics["pinproxy_pin_sightings_total",
                        ["rule": "api.example.com", "pin": E2EScenario.pin(real.intermediate.certificate)]] == accepted - resumed)
        #expect(metrics["pinproxy_pin_sightings_total", ["rule": "api.example.com", "pin": Self.backupPin]] == 0)
        #expect(metrics["pinproxy_leaf_expiry_timestamp_seconds", ["rule": "api.example.com"]]
                == real.leaf.certificate.facts.notAfter.timeIntervalSince1970.rounded(.down))
        #expect(metrics["pinproxy_interception_ca_expiry_timestamp_seconds"] != nil)
        #expect(metrics["pinproxy_config_generation"] == 1)
        #expect(metrics["pinproxy_violation_log_write_errors_total"] == 0)
        #expect(metrics["pinproxy_violation_log_queued_lines"] == 0)
    }

    @Test("pinproxy status prints each rule's counts, the pins seen and never seen, and the leaf's expiry")
    func statusCommand() throws {
        try mixedRun()
        let status = try PinproxyBinary.run(["status", "--config", configFile])
        #expect(status.status == 0, "\(status.errorOutput)")
        let lines = status.outputLines
        #expect(lines.contains { $0.hasPrefix("rule api.example.com: 5 requests, 0 blocked, 0 reported;") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("rule mitm.example.com: 1 requests, 1 blocked, 0 reported;") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("rule report.example.com: 1 requests, 0 blocked, 1 reported;") }, "\(lines)")
        #expect(lines.contains("  pin never seen  \(Self.backupPin)"))
        #expect(lines.contains { $0.hasPrefix("  pin seen        \(E2EScenario.pin(real.intermediate.certificate))") })
        #expect(lines.contains {
            $0.hasPrefix("  leaf expires    \(RFC3339Timestamp.seconds(real.leaf.certificate.facts.notAfter))")
        })
        #expect(lines.contains { $0.hasPrefix("WARNING $.hosts[\"mitm.example.com\"].expires: pins expire on \(Self.inTenDays)") },
                "\(lines)")
        let json = try PinproxyBinary.run(["status", "--json", "--config", configFile])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(document["config_generation"] as? Int == 1)
    }
}

import Foundation

/// `GET /metrics` (SPEC §6): a snapshot in the Prometheus text exposition
/// format 0.0.4 — `# HELP` and `# TYPE` once per family, base units
/// (seconds since 1970 for expiry times), `_total` on counters, labels only
/// from the configuration (listeners, rule keys, pins, reasons, classes).
public enum PrometheusExposition {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func render(_ snapshot: MetricsSnapshot, openSSL: String, libevent: String) -> String {
        var text = Families()
        text.family("pinproxy_build_info", .gauge, "pinproxy's version and the libraries it runs on.")
        text.sample("pinproxy_build_info", ["version": snapshot.version, "openssl": openSSL, "libevent": libevent], 1)
        text.family("pinproxy_start_time_seconds", .gauge, "When the daemon started, seconds since 1970.")
        text.sample("pinproxy_start_time_seconds", [:], seconds(snapshot.startedAt))
        text.family("pinproxy_config_generation", .gauge, "The configuration generation in force (1, then +1 per reload).")
        text.sample("pinproxy_config_generation", [:], snapshot.generation)
        text.family("pinproxy_connections_active", .gauge, "Client connections open now.")
        text.sample("pinproxy_connections_active", [:], snapshot.activeConnections)

        text.family("pinproxy_connections_accepted_total", .counter, "Client connections accepted, by listener.")
        for listener in snapshot.listeners {
            text.sample("pinproxy_connections_accepted_total", listener.labels, listener.accepted)
        }
        text.family("pinproxy_responses_total", .counter, "Final responses sent to clients, by listener and status class.")
        for listener in snapshot.listeners {
            for (index, count) in listener.responses.enumerated() {
                text.sample("pinproxy_responses_total", listener.labels.merging(["class": "\(index + 1)xx"]) { $1 }, count)
            }
        }
        text.family("pinproxy_connect_total", .counter, "CONNECT requests by listener and outcome.")
        for listener in snapshot.listeners {
            for (outcome, count) in [("intercepted", listener.intercepted), ("tunnelled", listener.tunnelled),
                                     ("refused", listener.refusedConnects)] {
                text.sample("pinproxy_connect_total", listener.labels.merging(["outcome": outcome]) { $1 }, count)
            }
        }
        text.family("pinproxy_denied_total", .counter, "Requests and CONNECTs refused by default_policy \"deny\", by listener.")
        for listener in snapshot.listeners { text.sample("pinproxy_denied_total", listener.labels, listener.denied) }

        text.family("pinproxy_rule_requests_total", .counter, "Requests routed under each rule.")
        for rule in snapshot.rules { text.sample("pinproxy_rule_requests_total", ["rule": rule.rule], rule.requests) }
        text.family("pinproxy_upstream_handshakes_total", .counter, "Upstream TLS handshakes by rule and outcome.")
        for rule in snapshot.rules {
            let handshakes = rule.handshakes
            for (outcome, count) in [("accepted", handshakes.accepted), ("blocked", handshakes.blocked),
                                     ("reported", handshakes.reported), ("error", handshakes.failed)] {
                text.sample("pinproxy_upstream_handshakes_total", ["rule": rule.rule, "outcome": outcome], count)
            }
        }
        text.family("pinproxy_upstream_handshakes_resumed_total", .counter,
                    "Accepted upstream handshakes that resumed a TLS session, by rule.")
        for rule in snapshot.rules {
            text.sample("pinproxy_upstream_handshakes_resumed_total", ["rule": rule.rule], rule.handshakes.resumed)
        }
        text.family("pinproxy_violations_total", .counter, "Pin violations by rule, reason and action.")
        for rule in snapshot.rules {
            for violation in rule.violations {
                text.sample("pinproxy_violations_total", ["rule": rule.rule, "reason": violation.reason.rawValue,
                                                          "action": violation.action.rawValue], violation.count)
            }
        }
        text.family("pinproxy_pin_sightings_total", .counter, "Verified upstream chains that carried each configured pin.")
        for rule in snapshot.rules {
            for pin in rule.pins {
                text.sample("pinproxy_pin_sightings_total", ["rule": rule.rule, "pin": pin.pin], pin.sightings)
            }
        }
        text.family("pinproxy_leaf_expiry_timestamp_seconds", .gauge,
                    "notAfter of the last fully verified upstream leaf, by rule, seconds since 1970.")
        for rule in snapshot.rules {
            if let leaf = rule.leaf { text.sample("pinproxy_leaf_expiry_timestamp_seconds", ["rule": rule.rule], seconds(leaf.notAfter)) }
        }
        text.family("pinproxy_upstream_idle_connections", .gauge, "Verified upstream connections idle in the pools.")
        text.sample("pinproxy_upstream_idle_connections", [:], snapshot.idleUpstreamConnections)
        text.family("pinproxy_violation_log_queued_lines", .gauge, "Violation events waiting to be written and synced.")
        text.sample("pinproxy_violation_log_queued_lines", [:], snapshot.violationLogQueued)
        text.family("pinproxy_violation_log_write_errors_total", .counter, "Failed writes or syncs of the violation log.")
        text.sample("pinproxy_violation_log_write_errors_total", [:], snapshot.violationLogWriteErrors)
        text.family("pinproxy_violation_log_dropped_total", .counter, "Violation events refused because the queue was full.")
        text.sample("pinproxy_violation_log_dropped_total", [:], snapshot.violationLogDropped)
        let custom = snapshot.customChecks
        text.family("pinproxy_custom_checks_started_total", .counter, "Custom policy commands started.")
        text.sample("pinproxy_custom_checks_started_total", [:], custom.started)
        text.family("pinproxy_custom_checks_shared_total", .counter,
                    "Upstream handshakes that joined a custom command already asked about their chain.")
        text.sample("pinproxy_custom_checks_shared_total", [:], custom.shared)
        text.family("pinproxy_custom_checks_running", .gauge, "Custom policy commands running now.")
        text.sample("pinproxy_custom_checks_running", [:], custom.running)
        text.family("pinproxy_custom_checks_waiting", .gauge, "Custom policy commands waiting for limits.custom_checks.")
        text.sample("pinproxy_custom_checks_waiting", [:], custom.waiting)
        if let expiry = snapshot.interceptionCAExpiry {
            text.family("pinproxy_interception_ca_expiry_timestamp_seconds", .gauge,
                        "notAfter of the interception CA's issuing certificate, seconds since 1970.")
            text.sample("pinproxy_interception_ca_expiry_timestamp_seconds", [:], seconds(expiry))
        }
        return text.output
    }

    private static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// A label value as the format writes it: `\`, `"` and newline escaped.
    static func escaped(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    private struct Families {
        enum Kind: String { case counter, gauge }
        var output = ""

        mutating func family(_ name: String, _ kind: Kind, _ help: String) {
            output += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
        }

        mutating func sample(_ name: String, _ labels: [String: String], _ value: some BinaryInteger) {
            output += name
            if !labels.isEmpty {
                // Sorted, so that the same series is always written the same way.
                let pairs = labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(PrometheusExposition.escaped($0.value))\"" }
                output += "{" + pairs.joined(separator: ",") + "}"
            }
            output += " \(value)\n"
        }
    }
}

private extension MetricsSnapshot.Listener {
    var labels: [String: String] { ["listener": name, "mode": mode] }
}

import Foundation

/// `GET /status` (SPEC §6), what `pinproxy status` prints: per rule its
/// requests, blocked, reported, the pins seen and never seen, the last
/// verified leaf's expiry, and the warnings an operator must act on before a
/// certificate renewal breaks a pin.
public enum StatusDocument {
    /// A renewal within this long of a leaf whose own key is the only pin
    /// that matched would be blocked.
    public static let leafRenewalWindow: TimeInterval = 30 * 86_400

    /// What is wrong, or about to be, with `rule` at `now`.
    public static func warnings(for rule: MetricsSnapshot.Rule, now: Date) -> [String] {
        var warnings: [String] = []
        if let leaf = rule.leaf, leaf.onlyLeafKeyMatched, leaf.notAfter.timeIntervalSince(now) < leafRenewalWindow {
            let days = Int((leaf.notAfter.timeIntervalSince(now) / 86_400).rounded(.down))
            warnings.append("the only pin that matched is the leaf's own key and the leaf expires "
                + "\(RFC3339Timestamp.seconds(leaf.notAfter)) (in \(days) days): a renewal with a new key "
                + "would block every request; pin the issuer's key too, or the new key as a backup")
        }
        // A backup pin no server presents is normal; a primary pin that no
        // verified chain carried means the rule pins something it never sees.
        if rule.leaf != nil, let primary = rule.pins.first, primary.sightings == 0 {
            warnings.append("the primary pin \(primary.pin) has never been seen in a verified chain")
        }
        return warnings
    }

    /// `warnings`: the daemon's drift findings (each rule's own are in its entry too).
    public static func render(_ snapshot: MetricsSnapshot, warnings: [String] = [], now: Date) -> [UInt8] {
        var json = JSONLineWriter()
        json.beginObject()
        json.key("version"); json.string(snapshot.version)
        json.key("time"); json.string(RFC3339Timestamp.seconds(now))
        json.key("started"); json.string(RFC3339Timestamp.seconds(snapshot.startedAt))
        json.key("config_generation"); json.integer(snapshot.generation)
        json.key("connections_active"); json.integer(snapshot.activeConnections)
        json.key("warnings"); json.beginArray()
        for warning in warnings { json.string(warning) }
        json.endArray()
        json.key("listeners"); json.beginArray()
        for listener in snapshot.listeners {
            json.beginObject()
            json.key("listener"); json.string(listener.name)
            json.key("mode"); json.string(listener.mode)
            json.key("connections_accepted"); json.integer(Int(clamping: listener.accepted))
            json.key("responses"); json.beginObject()
            for (index, count) in listener.responses.enumerated() {
                json.key("\(index + 1)xx"); json.integer(Int(clamping: count))
            }
            json.endObject()
            json.key("connect"); json.beginObject()
            json.key("intercepted"); json.integer(Int(clamping: listener.intercepted))
            json.key("tunnelled"); json.integer(Int(clamping: listener.tunnelled))
            json.key("refused"); json.integer(Int(clamping: listener.refusedConnects))
            json.endObject()
            json.key("denied"); json.integer(Int(clamping: listener.denied))
            json.endObject()
        }
        json.endArray()
        json.key("rules"); json.beginArray()
        for rule in snapshot.rules { write(rule, now: now, to: &json) }
        json.endArray()
        json.key("violation_log"); json.beginObject()
        json.key("queued"); json.integer(snapshot.violationLogQueued)
        json.key("write_errors"); json.integer(Int(clamping: snapshot.violationLogWriteErrors))
        json.key("dropped"); json.integer(snapshot.violationLogDropped)
        json.endObject()
        if let expiry = snapshot.interceptionCAExpiry {
            json.key("interception_ca_expires"); json.string(RFC3339Timestamp.seconds(expiry))
        }
        json.endObject()
        return json.bytes + [UInt8(ascii: "\n")]
    }

    private static func write(_ rule: MetricsSnapshot.Rule, now: Date, to json: inout JSONLineWriter) {
        json.beginObject()
        json.key("rule"); json.string(rule.rule)
        json.key("requests"); json.integer(Int(clamping: rule.requests))
        json.key("blocked"); json.integer(Int(clamping: rule.violations(.blocked)))
        json.key("reported"); json.integer(Int(clamping: rule.violations(.reported)))
        json.key("handshakes"); json.beginObject()
        json.key("accepted"); json.integer(Int(clamping: rule.handshakes.accepted))
        json.key("resumed"); json.integer(Int(clamping: rule.handshakes.resumed))
        json.key("blocked"); json.integer(Int(clamping: rule.handshakes.blocked))
        json.key("reported"); json.integer(Int(clamping: rule.handshakes.reported))
        json.key("error"); json.integer(Int(clamping: rule.handshakes.failed))
        json.endObject()
        json.key("pins_seen"); json.beginArray()
        for pin in rule.pins where pin.sightings > 0 {
            json.beginObject()
            json.key("pin"); json.string(pin.pin)
            json.key("handshakes"); json.integer(Int(clamping: pin.sightings))
            json.endObject()
        }
        json.endArray()
        json.key("pins_never_seen"); json.beginArray()
        for pin in rule.pins where pin.sightings == 0 { json.string(pin.pin) }
        json.endArray()
        if let leaf = rule.leaf {
            json.key("leaf_expires"); json.string(RFC3339Timestamp.seconds(leaf.notAfter))
            json.key("leaf_seen"); json.string(RFC3339Timestamp.seconds(leaf.seenAt))
        }
        json.key("warnings"); json.beginArray()
        for warning in warnings(for: rule, now: now) { json.string(warning) }
        json.endArray()
        json.endObject()
    }
}

import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy status`: what the running daemon's admin listener reports at
/// `GET /status` (SPEC §6), per listener and per rule, with the warnings
/// first. `--json` prints the document as served. Exit 0, 1 without
/// `admin` in the configuration, 3 when the daemon cannot be reached.
enum StatusCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        guard let configuration = ConfigurationSource.load(invocation) else { return 1 }
        guard let admin = configuration.admin else {
            Console.error("pinproxy status: the configuration has no admin listener; add "
                + "\"admin\": { \"listen\": \"127.0.0.1:9901\" } and restart pinproxy")
            return 1
        }
        let body: [UInt8]
        do {
            body = try AdminClient.get("/status", from: admin.address)
        } catch {
            Console.error("pinproxy status: \(error)")
            return 3
        }
        if invocation.printsJSON {
            var text = String(decoding: body, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            Console.print(text)
            return 0
        }
        guard let document = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            Console.error("pinproxy status: the admin listener at \(admin.address) sent something that is not the status document")
            return 3
        }
        Console.print(lines(of: document).joined(separator: "\n"))
        return 0
    }

    static func lines(of document: [String: Any]) -> [String] {
        func number(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? 0 }
        var lines = ["pinproxy \(document["version"] as? String ?? "?"), config generation \(number(document["config_generation"])), "
            + "started \(document["started"] as? String ?? "?"), \(number(document["connections_active"])) connections open"]
        let rules = document["rules"] as? [[String: Any]] ?? []
        // The daemon's drift findings include each rule's warnings, named by rule.
        for warning in document["warnings"] as? [String] ?? [] { lines.append("WARNING \(warning)") }
        for listener in document["listeners"] as? [[String: Any]] ?? [] {
            let responses = listener["responses"] as? [String: Any] ?? [:]
            let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"].map { "\($0) \(number(responses[$0]))" }.joined(separator: ", ")
            let connect = listener["connect"] as? [String: Any] ?? [:]
            lines.append("listener \(listener["listener"] as? String ?? "?") (\(listener["mode"] as? String ?? "?")): "
                + "\(number(listener["connections_accepted"])) connections; \(classes); CONNECT intercepted "
                + "\(number(connect["intercepted"])), tunnelled \(number(connect["tunnelled"])), refused \(number(connect["refused"])); "
                + "denied \(number(listener["denied"]))")
        }
        for rule in rules {
            let handshakes = rule["handshakes"] as? [String: Any] ?? [:]
            lines.append("rule \(rule["rule"] as? String ?? "?"): \(number(rule["requests"])) requests, "
                + "\(number(rule["blocked"])) blocked, \(number(rule["reported"])) reported; upstream handshakes "
                + "\(number(handshakes["accepted"])) accepted (\(number(handshakes["resumed"])) resumed), "
                + "\(number(handshakes["blocked"])) blocked, \(number(handshakes["reported"])) reported, \(number(handshakes["error"])) failed")
            for seen in rule["pins_seen"] as? [[String: Any]] ?? [] {
                lines.append("  pin seen        \(seen["pin"] as? String ?? "?") (\(number(seen["handshakes"])) handshakes)")
            }
            for pin in rule["pins_never_seen"] as? [String] ?? [] {
                lines.append("  pin never seen  \(pin)")
            }
            if let expires = rule["leaf_expires"] as? String {
                lines.append("  leaf expires    \(expires) (verified \(rule["leaf_seen"] as? String ?? "?"))")
            }
        }
        return lines
    }
}

/// Validates `timeouts` (SPEC §2, §5): durations as strings with a unit.
enum TimeoutsSection {
    static let keys = ["connect", "handshake", "request_header", "idle", "shutdown", "tunnel_idle"]

    static func parse(_ value: JSONValue, at path: JSONPath, defaults: Timeouts,
                      into diagnostics: inout ConfigurationDiagnostics) -> Timeouts {
        var timeouts = defaults
        guard let members = diagnostics.members(of: value, at: path, allowed: keys) else { return timeouts }
        for member in members {
            let memberPath = path.key(member.key)
            let duration: Duration?
            switch member.value.kind {
            case .integer(let number):
                diagnostics.problem(memberPath, member.value, "bare number \(number) has no unit",
                                    hint: "write a string with a unit, e.g. \"\(number)s\" or \"\(number)ms\"")
                continue
            case .string(let text):
                duration = DurationSyntax.parse(text)
                if duration == nil {
                    diagnostics.problem(memberPath, member.value, "\"\(text)\" is not a positive duration",
                                        hint: "write e.g. \"250ms\", \"5s\", \"2m\" or \"1h\"")
                }
            default:
                diagnostics.problem(memberPath, member.value, "expected a duration string, found \(member.value.typeName)",
                                    hint: "write e.g. \"5s\"")
                continue
            }
            guard let duration else { continue }
            switch member.key {
            case "connect": timeouts.connect = duration
            case "handshake": timeouts.handshake = duration
            case "request_header": timeouts.requestHeader = duration
            case "idle": timeouts.idle = duration
            case "tunnel_idle": timeouts.tunnelIdle = duration
            default: timeouts.shutdown = duration
            }
        }
        return timeouts
    }
}

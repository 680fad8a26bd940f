/// Renders a violation log record as the one readable line of
/// `pinproxy tail` (SPEC §4):
///
///     2026-11-30T17:43:44Z BLOCKED  api.example.com:443  pin_mismatch  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil CA)
///
/// Time in whole seconds (UTC), the action upper-cased and padded so columns
/// line up, then host:port, reason, and the evidence: the leaf's SPKI pin,
/// shortened (`--json` has it in full), with its subject and issuer; or for a
/// summary, how many identical events were counted instead of written.
public struct TailFormatter: Sendable {
    /// ANSI colour for the action (red BLOCKED, yellow REPORTED); only when
    /// standard output is a terminal.
    public var usesColour: Bool

    /// Base64 characters of the pin shown before the ellipsis.
    public static let pinPrefixLength = 10

    public init(usesColour: Bool) {
        self.usesColour = usesColour
    }

    /// The line, without a newline.
    public func line(for record: ViolationLogRecord) -> String {
        let time = RFC3339Timestamp.seconds(record.time)
        let label = record.action == .blocked ? "BLOCKED" : "REPORTED"
        let padding = String(repeating: " ", count: 8 - label.count)
        let action: String
        if usesColour {
            let colour = record.action == .blocked ? "\u{1B}[1;31m" : "\u{1B}[1;33m"
            action = colour + label + "\u{1B}[0m" + padding
        } else {
            action = label + padding
        }
        let endpoint = record.host.contains(":") ? "[\(record.host)]:\(record.port)" : "\(record.host):\(record.port)"
        return "\(time) \(action) \(endpoint)  \(record.reason)  \(evidence(record))"
    }

    private func evidence(_ record: ViolationLogRecord) -> String {
        switch record.kind {
        case let .summary(count, firstTime, lastTime):
            return "×\(count) more (first \(RFC3339Timestamp.seconds(firstTime)) last \(RFC3339Timestamp.seconds(lastTime)))"
        case let .violation(leaf?, _):
            return "served \(Self.shortened(leaf.spki)) (\(leaf.subject) ← \(leaf.issuer))"
        case let .violation(nil, detail):
            return detail
        }
    }

    /// `sha256/` and the first `pinPrefixLength` base64 characters, then `…`.
    static func shortened(_ pin: String) -> String {
        let prefix = "sha256/"
        guard pin.hasPrefix(prefix) else { return pin }
        let digest = pin.dropFirst(prefix.count)
        guard digest.count > pinPrefixLength else { return pin }
        return prefix + digest.prefix(pinPrefixLength) + "…"
    }
}

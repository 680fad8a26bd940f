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
        let host = Self.inert(record.host)
        let endpoint = host.contains(":") ? "[\(host)]:\(record.port)" : "\(host):\(record.port)"
        return "\(time) \(action) \(endpoint)  \(Self.inert(record.reason))  \(evidence(record))"
    }

    private func evidence(_ record: ViolationLogRecord) -> String {
        switch record.kind {
        case let .summary(count, firstTime, lastTime):
            return "×\(count) more (first \(RFC3339Timestamp.seconds(firstTime)) last \(RFC3339Timestamp.seconds(lastTime)))"
        case let .violation(leaf?, _):
            return "served \(Self.inert(Self.shortened(leaf.spki))) (\(Self.inert(leaf.subject)) ← \(Self.inert(leaf.issuer)))"
        case let .violation(nil, detail):
            return Self.inert(detail)
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

    /// `text` with every control character (C0, DEL, C1) and the Unicode line
    /// and paragraph separators written as a visible `\u{XX}` escape. The log
    /// is read, not trusted: a subject or issuer is chosen by whoever made the
    /// served certificate, and a raw ESC or newline in it would let a man in
    /// the middle rewrite the operator's terminal or forge a second line.
    static func inert(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}

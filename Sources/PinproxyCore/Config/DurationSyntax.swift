/// Parses configuration durations: a positive integer and a unit, `ms`, `s`,
/// `m` or `h` (`"250ms"`, `"5s"`, `"2m"`, `"1h"`; SPEC §2).
///
/// Bare numbers are refused rather than guessed at (seconds? milliseconds?);
/// the caller's hint shows the accepted spelling.
public enum DurationSyntax {
    /// The duration, or nil when `text` is not `<digits><unit>` or is zero.
    public static func parse(_ text: String) -> Duration? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let unit = text.dropFirst(digits.count)
        // At most 9 digits: even hours then fit in Int64 nanoseconds.
        guard !digits.isEmpty, digits.count <= 9, let amount = Int64(digits), amount > 0 else { return nil }
        switch unit {
        case "ms": return .milliseconds(amount)
        case "s": return .seconds(amount)
        case "m": return .seconds(amount * 60)
        case "h": return .seconds(amount * 3600)
        default: return nil
        }
    }

    /// `duration` as the configuration spells it (`"250ms"`, `"2s"`, `"10m"`, `"1h"`, `"0s"`):
    /// the largest unit that divides it.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if milliseconds == 0 { return "0s" }
        if milliseconds % 3_600_000 == 0 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds % 60_000 == 0 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(milliseconds)ms"
    }
}

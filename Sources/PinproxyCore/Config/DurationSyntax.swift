/// Parses configuration durations: a positive integer and a unit, `ms`, `s`,
/// `m` or `h` (`"250ms"`, `"5s"`, `"2m"`, `"1h"`; SPEC §2).
///
/// Bare numbers are refused rather than guessed at (seconds? milliseconds?);
/// the caller's hint shows the accepted spelling.
enum DurationSyntax {
    /// The duration, or nil when `text` is not `<digits><unit>` or is zero.
    static func parse(_ text: String) -> Duration? {
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
}

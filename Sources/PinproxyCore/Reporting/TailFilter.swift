import Foundation

/// Which records `pinproxy tail` shows: `--host`, `--reason`, `--since`
/// (SPEC §4). Every criterion given must hold.
public struct TailFilter: Sendable {
    /// `--host`: the same patterns as `hosts` keys (SPEC §2.2), without
    /// include_subdomains (write `**.example.com` for a subtree).
    public var host: HostPattern?
    /// `--reason`: one of `ViolationReason`'s identifiers.
    public var reason: ViolationReason?
    /// `--since`: records strictly before this instant are hidden.
    public var since: Date?

    public init(host: HostPattern? = nil, reason: ViolationReason? = nil, since: Date? = nil) {
        self.host = host
        self.reason = reason
        self.since = since
    }

    /// Whether `record` passes every criterion. A summary line's `time` is
    /// when its window closed, so `--since` keeps a summary whose window
    /// reaches past the cut-off.
    public func includes(_ record: ViolationLogRecord) -> Bool {
        if let host {
            guard let name = HostName(record.host), host.matches(name, includeSubdomains: false) else { return false }
        }
        if let reason, record.reason != reason.rawValue { return false }
        if let since {
            var latest = record.time
            if case let .summary(_, _, lastTime) = record.kind { latest = max(latest, lastTime) }
            if latest < since { return false }
        }
        return true
    }

    /// Parses `--since`: a duration before `now` (`90s`, `10m`, `2h`, as in
    /// the configuration) or an RFC 3339 time. nil when it is neither.
    public static func since(_ text: String, now: Date) -> Date? {
        if let duration = DurationSyntax.parse(text) {
            let (seconds, attoseconds) = duration.components
            return now.addingTimeInterval(-(Double(seconds) + Double(attoseconds) / 1e18))
        }
        return RFC3339TimestampParser.parse(text)
    }
}

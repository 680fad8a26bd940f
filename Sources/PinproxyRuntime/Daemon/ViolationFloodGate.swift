import Foundation

/// Flood control for the violation log (SPEC §4): identical events are written
/// in full up to `burst` per key per window; past it they are only counted, and
/// one summary closes the window.
///
/// Why a value type with an injected clock: the counts are the point (an
/// operator must be able to add "written + summarised" and get every attempt),
/// so the arithmetic is tested exactly, with no timers and no I/O.
///
/// Invariants: for every key, `writes + Σ summary.count` equals the number of
/// `admit` calls; a window starts at the key's first occurrence after the
/// previous window ended and lasts `window` seconds; a window that expires
/// while suppressed occurrences are pending is never lost — its summary waits
/// for the next `closeWindows` even when `admit` has already started a new one.
public struct ViolationFloodGate: Sendable {
    /// What to do with one occurrence.
    public enum Admission: Sendable, Equatable {
        /// Under the burst: write the event in full.
        case write
        /// Over the burst: counted into the window's summary.
        case suppress
    }

    /// The suppressed occurrences of one key in one window, for a
    /// `"event":"pin_violation_summary"` line.
    public struct Summary: Sendable, Equatable {
        public let key: String
        /// Suppressed occurrences only (the written ones are in the log already).
        public let count: Int
        /// Time of the first suppressed occurrence.
        public let firstTime: Date
        /// Time of the last suppressed occurrence.
        public let lastTime: Date
        /// When the window closed: its natural end, or the `now` of an early close
        /// (shutdown, rotation), whichever is earlier.
        public let closedAt: Date

        public init(key: String, count: Int, firstTime: Date, lastTime: Date, closedAt: Date) {
            self.key = key
            self.count = count
            self.firstTime = firstTime
            self.lastTime = lastTime
            self.closedAt = closedAt
        }
    }

    /// The running window of one key.
    private struct Window: Sendable {
        let start: Date
        var written: Int
        var suppressed: Int
        var firstSuppressed: Date?
        var lastSuppressed: Date?
    }

    /// Full events allowed per key per window (`log_burst`); at least 0.
    public let burst: Int
    /// Length of a window in seconds.
    public let window: TimeInterval
    private var windows: [String: Window] = [:]
    /// Summaries of windows that expired inside `admit`, oldest first.
    private var expired: [Summary] = []

    public init(burst: Int, window: TimeInterval = 60) {
        self.burst = max(0, burst)
        self.window = window
    }

    /// Counts one occurrence of `key` at `time` and says whether to write it.
    public mutating func admit(key: String, at time: Date) -> Admission {
        if let current = windows[key], time >= current.start.addingTimeInterval(window) {
            if let summary = summary(of: key, current, closedAt: current.start.addingTimeInterval(window)) {
                expired.append(summary)
            }
            windows[key] = nil
        }
        var current = windows[key] ?? Window(start: time, written: 0, suppressed: 0)
        defer { windows[key] = current }
        if current.written < burst {
            current.written += 1
            return .write
        }
        current.suppressed += 1
        current.firstSuppressed = current.firstSuppressed ?? time
        current.lastSuppressed = time
        return .suppress
    }

    /// Closes windows and returns the summaries of those with suppressed occurrences.
    ///
    /// - Parameters:
    ///   - before: windows that ended at or before this time are closed (the
    ///     periodic timer passes its current time); `nil` closes every window
    ///     (shutdown, log rotation), so that no count is carried across files.
    ///   - now: the time of the call, recorded as `closedAt` of windows closed early.
    /// - Returns: summaries ordered by `closedAt`, then key, so output is deterministic.
    public mutating func closeWindows(before: Date? = nil, now: Date) -> [Summary] {
        var result = expired
        expired = []
        for (key, current) in windows {
            let end = current.start.addingTimeInterval(window)
            if let before, end > before { continue }
            windows[key] = nil
            if let summary = summary(of: key, current, closedAt: min(end, now)) {
                result.append(summary)
            }
        }
        return result.sorted { ($0.closedAt, $0.key) < ($1.closedAt, $1.key) }
    }

    /// Number of keys with an open window (bounded by distinct events per window).
    public var openWindowCount: Int { windows.count }

    private func summary(of key: String, _ window: Window, closedAt: Date) -> Summary? {
        guard window.suppressed > 0, let first = window.firstSuppressed, let last = window.lastSuppressed else {
            return nil
        }
        return Summary(key: key, count: window.suppressed, firstTime: first, lastTime: last, closedAt: closedAt)
    }
}

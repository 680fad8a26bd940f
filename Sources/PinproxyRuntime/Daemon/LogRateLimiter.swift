import Foundation

/// At most `burst` lines per minute of one kind on one loop; the lines held
/// back are counted and said in one line when the next minute's first one
/// is let through (SPEC §6: denied requests on stderr, rate-limited).
final class LogRateLimiter {
    private let burst: Int
    private let subsystem: String
    private let what: String
    private var windowStart = ContinuousClock.Instant.now
    private var written = 0
    private var heldBack = 0

    init(burst: Int = 10, subsystem: String, what: String) {
        self.burst = burst
        self.subsystem = subsystem
        self.what = what
    }

    /// Whether the caller may write its line now.
    func admit(now: ContinuousClock.Instant, logger: Logger) -> Bool {
        if now - windowStart >= .seconds(60) {
            if heldBack > 0 {
                logger.log(.info, subsystem, "\(heldBack) more \(what) in the last minute were not logged")
            }
            windowStart = now
            written = 0
            heldBack = 0
        }
        guard written < burst else {
            heldBack += 1
            return false
        }
        written += 1
        return true
    }
}

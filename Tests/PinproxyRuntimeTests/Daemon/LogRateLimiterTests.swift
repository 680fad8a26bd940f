import Foundation
import Testing
@testable import PinproxyRuntime

/// SPEC §6: denied requests are logged on stderr, rate-limited — at most a
/// burst per minute, the rest counted and said once the next minute starts.
@Suite("Denied-request log lines: a burst a minute, the rest counted")
struct LogRateLimiterTests {
    @Test("the first burst passes, the rest of the minute is held back, the next minute says how many")
    func burstThenSummary() {
        let log = CapturedLog()
        let limiter = LogRateLimiter(burst: 3, subsystem: "http", what: "denied requests")
        let start = ContinuousClock.now
        let admitted = (0..<10).map { offset in limiter.admit(now: start + .milliseconds(offset), logger: log.logger) }
        #expect(admitted == [true, true, true] + Array(repeating: false, count: 7))
        #expect(log.drain().isEmpty, "nothing is said within the minute")
        #expect(limiter.admit(now: start + .seconds(61), logger: log.logger))
        #expect(log.drain().contains("7 more denied requests in the last minute were not logged"))
        #expect(limiter.admit(now: start + .seconds(62), logger: log.logger))
        #expect(log.drain().isEmpty, "no summary when nothing was held back")
    }
}

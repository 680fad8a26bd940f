import Foundation
import PinproxyCore

/// Drift (issue 16, SPEC §6): what goes wrong with time alone — pins whose
/// `expires` is near or past, a CRL past its nextUpdate, the interception CA
/// near its end, a leaf whose own key is the only pin that matched and that
/// is due for renewal. Said at start and at reload (with the configuration's
/// warnings), once a day on stderr, and always in `/status`.
extension Daemon {
    static let driftInterval: Duration = .seconds(86_400)

    /// Every drift finding at `now`, one line each, naming the rule.
    func driftWarnings(at now: Date) -> [String] {
        let active = workers[0].configuration
        var warnings: [String] = []
        for rule in active.configuration.policies.rules {
            if let message = PolicyWarnings.expiryWarning(rule.policy, at: now) {
                warnings.append("$.hosts[\"\(rule.key)\"].expires: \(message)")
            }
        }
        return warnings + active.fileWarnings(at: now) + active.interceptionWarnings(at: now) + counterWarnings(at: now)
    }

    /// The drift only the counters know of: a leaf-key-only pin due for
    /// renewal, a primary pin never seen.
    ///
    /// Only rules that saw traffic are sampled: the findings need a verified
    /// leaf, and this runs on loop 0 at every reload, where sampling each of
    /// 100,000 rules stalled the loop for hundreds of milliseconds (and at a
    /// reload this runs on the reload queue, `counterWarnings(of:at:)`).
    func counterWarnings(at now: Date) -> [String] {
        Self.counterWarnings(of: workers[0].configuration, at: now)
    }

    /// `counterWarnings` of any generation, from any thread (the counters
    /// are atomics): a reload says them from its queue, since even finding
    /// the rules that saw traffic among 100,000 takes tens of milliseconds.
    static func counterWarnings(of configuration: ActiveConfiguration, at now: Date) -> [String] {
        configuration.ruleCounters.filter(\.hasLanes).flatMap { counters in
            let rule = counters.sample
            return StatusDocument.warnings(for: rule, now: now).map { "$.hosts[\"\(rule.rule)\"]: \($0)" }
        }
    }

    /// Loop 0's daily timer.
    func scheduleDriftCheck() {
        driftTimer = Timer(loop: workers[0].loop) { [unowned self] in
            self.driftWarnings(at: Date()).forEach { self.logger.log(.warning, "drift", $0) }
            self.driftTimer?.schedule(after: Self.driftInterval)
        }
        driftTimer?.schedule(after: Self.driftInterval)
    }
}

import Foundation
import PinproxyCore

/// How one rule with `"pins": "learn"` is checked (SPEC §2.1): before it has
/// learned, by `default` evaluation under its own settings, the handshake's
/// accepted chain then offered to the store; afterwards, exactly as if the
/// learned pins were its configured `pins`.
///
/// Read on each full handshake of this rule only (one lock, a dictionary
/// lookup); rules that do not learn never reach it.
final class PinLearning: Sendable {
    let rule: String
    let store: LearnedPinStore
    private let policy: TrustPolicy
    private let publicSuffixes: PublicSuffixList
    /// `default` evaluation, pins left out: what guards the first connection.
    let firstUseCheck: TrustCheck
    /// The check of the learned pins last asked for, built once per learned set.
    private let pinnedCheck = Locked<(pins: [SPKIPin], check: TrustCheck)?>(nil)

    init(rule: String, policy: TrustPolicy, store: LearnedPinStore, publicSuffixes: PublicSuffixList) {
        self.rule = rule
        self.policy = policy
        self.store = store
        self.publicSuffixes = publicSuffixes
        firstUseCheck = TrustCheck(policy: policy, evaluator: PolicyEvaluation.firstUseEvaluator(
            for: policy, publicSuffixes: publicSuffixes))
    }

    /// The check a new handshake runs, and whether its chain is to be learned
    /// (`learn(from:host:now:)` once the handshake is done).
    func currentCheck() -> (check: TrustCheck, learns: Bool) {
        guard let learned = store.pins(forRule: rule) else { return (firstUseCheck, true) }
        return (check(for: learned), false)
    }

    /// The pins the rule enforces, as `known_pins` shows them; empty while it learns.
    var knownPins: [String] { store.pins(forRule: rule)?.pins.map(\.description) ?? [] }

    /// What the rule has learned; nil while it learns.
    var learnedPins: LearnedPins? { store.pins(forRule: rule) }

    /// Whether the rule has learned nothing yet.
    var isUnlearned: Bool { store.pins(forRule: rule) == nil }

    /// After a handshake that ran `firstUseCheck`: learns its verified chain
    /// when the check accepted it, and returns the verdict that stands. That is
    /// `verdict` itself when this chain's pins were learned (or the check did
    /// not accept it: a chain that fails `default` evaluation teaches nothing),
    /// else the verdict of the pins another connection learned first, over the
    /// same chain, as if this handshake had been checked against them.
    func learn(from verdict: TrustVerdict, host: HostName, now: Date) -> TrustVerdict {
        guard case .allow = verdict.decision, let verified = verdict.chain.verified,
              let candidate = LearnedPins(learningFrom: verified, host: host.value, at: now) else { return verdict }
        let winner = store.learn(candidate, forRule: rule)
        guard winner.pins != candidate.pins else { return verdict }
        return check(for: winner).verdict(for: verdict.chain, now: now)
    }

    private func check(for learned: LearnedPins) -> TrustCheck {
        pinnedCheck.withLock { cached in
            if let cached, cached.pins == learned.pins { return cached.check }
            var pinned = policy
            pinned.pins = learned.pins
            let check = TrustCheck(policy: pinned, material: PinMaterial(spkiDigests: learned.digests),
                                   publicSuffixes: publicSuffixes)
            cached = (learned.pins, check)
            return check
        }
    }
}

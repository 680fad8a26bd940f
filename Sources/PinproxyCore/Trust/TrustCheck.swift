import Foundation

/// One policy's whole trust check (SPEC §2.3), built once per configuration
/// with its evaluator, and run by every handshake under that policy (and by
/// `probe --chain`): the single place a chain becomes a `TrustVerdict`.
public final class TrustCheck: Sendable {
    public let policy: TrustPolicy
    private let evaluator: any TrustEvaluator

    /// The check of `policy` with its resolved pins (`PolicyEvaluation`'s composition).
    public convenience init(policy: TrustPolicy, material: PinMaterial, publicSuffixes: PublicSuffixList) {
        self.init(policy: policy, evaluator: PolicyEvaluation.evaluator(for: policy, material: material,
                                                                         publicSuffixes: publicSuffixes))
    }

    /// A check with any evaluator (tests decide by hand this way).
    public init(policy: TrustPolicy, evaluator: any TrustEvaluator) {
        self.policy = policy
        self.evaluator = evaluator
    }

    /// Whether the handshake must gather the chain's facts at all: `disable`
    /// evaluates nothing (SPEC §2.3 step 1), so its verdict needs none.
    public var examinesChain: Bool { policy.kind != .disable }

    /// What the policy finds in `chain` at `now` and what to do about it
    /// (`enforce: false` turns every block into a report). A `custom` policy
    /// without its command's verdict fails closed here (`custom_failed`):
    /// callers that can ask the command use `verdict(for:now:custom:)`.
    public func verdict(for chain: PeerChain, now: Date) -> TrustVerdict {
        verdict(for: chain, now: now, custom: .failed(detail: "the custom command was not asked"))!
    }

    /// The verdict with what the custom command answered, or nil when the
    /// policy is `custom`, every check before the command passed, and the
    /// command has not answered yet (`custom` is nil): then the command must
    /// be asked about this chain, and this called again with its answer.
    /// A chain that fails a check before the command is never shown to it
    /// (SPEC §2.1): its verdict is that failure. After `expires` the command
    /// is no longer asked, as pins no longer apply then: chain and host decide.
    public func verdict(for chain: PeerChain, now: Date, custom: CustomVerdict?) -> TrustVerdict? {
        var evaluation = evaluator.evaluate(chain, now: now)
        var asked: CustomVerdict?
        if evaluation == .trusted, asksCommand(at: now) {
            guard let custom else { return nil }
            evaluation = custom.evaluation
            asked = custom
        }
        return TrustVerdict(evaluation: evaluation, decision: TrustDecision(evaluation, enforce: policy.enforce),
                            chain: chain, custom: asked)
    }

    /// Whether a chain that passed the other checks at `now` goes to the custom command.
    public func asksCommand(at now: Date) -> Bool {
        policy.kind == .custom && !(policy.expires?.hasPassed(at: now) ?? false)
    }
}

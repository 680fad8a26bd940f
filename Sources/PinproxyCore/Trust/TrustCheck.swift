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
    /// (`enforce: false` turns every block into a report).
    public func verdict(for chain: PeerChain, now: Date) -> TrustVerdict {
        let evaluation = evaluator.evaluate(chain, now: now)
        return TrustVerdict(evaluation: evaluation, decision: TrustDecision(evaluation, enforce: policy.enforce),
                            chain: chain)
    }
}

/// What one handshake's trust evaluation found and decided, with the
/// evidence a violation event needs: the value the handshake owns and the
/// connector, the session and `probe` read.
public struct TrustVerdict: Sendable, Hashable {
    public var evaluation: TrustEvaluation
    public var decision: TrustDecision
    public var chain: PeerChain
    /// What a `custom` rule's command answered; nil when it was not asked
    /// (another policy, or a check before it failed).
    public var custom: CustomVerdict?

    public init(evaluation: TrustEvaluation, decision: TrustDecision, chain: PeerChain, custom: CustomVerdict? = nil) {
        self.evaluation = evaluation
        self.decision = decision
        self.chain = chain
        self.custom = custom
    }
}

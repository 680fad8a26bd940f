import Foundation

/// A policy as an ordered list of small checks (Alamofire's
/// `CompositeTrustEvaluator`): the first failure wins and later checks do not run.
///
/// The order of `evaluators` is the order of SPEC §2.3 (chain → host → pins)
/// when built by `PolicyEvaluation`; an empty list trusts everything.
public struct CompositeEvaluator: TrustEvaluator {
    public let evaluators: [any TrustEvaluator]

    public init(_ evaluators: [any TrustEvaluator]) {
        self.evaluators = evaluators
    }

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        for evaluator in evaluators {
            let evaluation = evaluator.evaluate(chain, now: now)
            if case .failed = evaluation { return evaluation }
        }
        return .trusted
    }
}

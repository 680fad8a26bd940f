import Foundation

/// `policy: "disable"` (Alamofire's `DisabledTrustEvaluator`): SPEC §2.3 step 1,
/// accept without looking at the chain. Its use is warned about at start.
public struct DisabledEvaluator: TrustEvaluator {
    public init() {}

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation { .trusted }
}

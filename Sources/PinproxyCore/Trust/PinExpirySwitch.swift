import Foundation

/// Runs the pinned evaluation until the policy's `expires` day has passed and
/// the unpinned one from then on (SPEC §2.1 `expires`, §2.3 step 4).
///
/// The switch happens per evaluation at the injected `now`, so one evaluator
/// built with a configuration stays correct across the expiry instant.
public struct PinExpirySwitch: TrustEvaluator {
    public let expires: PinExpiry
    /// Chain (when validated) → host → pins.
    public let pinned: any TrustEvaluator
    /// What remains enforced once the pins have expired: chain → host.
    public let unpinned: any TrustEvaluator

    public init(expires: PinExpiry, pinned: any TrustEvaluator, unpinned: any TrustEvaluator) {
        self.expires = expires
        self.pinned = pinned
        self.unpinned = unpinned
    }

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        expires.hasPassed(at: now) ? unpinned.evaluate(chain, now: now) : pinned.evaluate(chain, now: now)
    }
}

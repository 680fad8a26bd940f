import Foundation

/// One check of a peer's chain (Alamofire 5's `ServerTrustEvaluating`): a
/// pure function of the handshake facts and the current time.
///
/// Evaluators run synchronously inside the TLS verify callback, so they must
/// not block, allocate much, or read the clock: `now` is injected so that
/// tests (and `pinproxy probe`) decide what time it is.
public protocol TrustEvaluator: Sendable {
    /// Returns `.trusted` or the first failure this evaluator finds in `chain` at `now`.
    func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation
}

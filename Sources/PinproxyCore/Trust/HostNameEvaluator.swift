import Foundation

/// SPEC §2.3 step 3: the leaf must name the upstream host (or IP).
///
/// The match itself (`X509_check_host` / `X509_check_ip`, subject CN never
/// consulted) is done by the runtime, which knows the host and the leaf; this
/// evaluator turns a mismatch into `hostname_mismatch` with the leaf as evidence.
public struct HostNameEvaluator: TrustEvaluator {
    public init() {}

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        guard chain.hostMatches else {
            let leaf = chain.served.first.map { "the leaf certificate \($0.subject)" } ?? "the server's leaf certificate"
            return .failed(reason: .hostnameMismatch, detail: "\(leaf) does not match the upstream host name")
        }
        return .trusted
    }
}

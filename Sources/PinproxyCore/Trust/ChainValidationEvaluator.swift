import Foundation

/// SPEC §2.3 step 2: the chain must have passed path validation against the
/// trust store (or the policy's anchors) at the current time.
///
/// The runtime runs the validation (OpenSSL) and records the outcome in
/// `PeerChain.chainFailure`; this evaluator maps it to a `ViolationReason`
/// with evidence. As defence in depth it also refuses a missing verified chain
/// and re-checks every verified certificate's validity period at `now`, so a
/// runtime that skipped validation can never be read as success.
public struct ChainValidationEvaluator: TrustEvaluator {
    public init() {}

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        if let failure = chain.chainFailure {
            return Self.evaluation(of: failure, served: chain.served, now: now)
        }
        guard let verified = chain.verified, !verified.isEmpty else {
            return .failed(reason: .chainUntrusted,
                           detail: "path validation produced no verified chain")
        }
        // RFC 5280 §4.1.2.5: valid from notBefore through notAfter, inclusive.
        for certificate in verified {
            if now > certificate.notAfter {
                return .failed(reason: .certificateExpired, detail: Self.expired(certificate))
            }
            if now < certificate.notBefore {
                return .failed(reason: .certificateNotYetValid, detail: Self.notYetValid(certificate))
            }
        }
        return .trusted
    }

    /// Maps OpenSSL's verdict to a reason, naming the offending served
    /// certificate when the served chain shows which one it is.
    static func evaluation(of failure: ChainFailure, served: [CertificateFacts], now: Date) -> TrustEvaluation {
        switch failure {
        case .untrusted(let detail):
            return .failed(reason: .chainUntrusted, detail: "chain not trusted: " + detail)
        case .revoked(let detail):
            return .failed(reason: .certificateRevoked, detail: detail)
        case .expired:
            let detail = served.first { now > $0.notAfter }.map(expired)
                ?? "a certificate of the chain has expired"
            return .failed(reason: .certificateExpired, detail: detail)
        case .notYetValid:
            let detail = served.first { now < $0.notBefore }.map(notYetValid)
                ?? "a certificate of the chain is not yet valid"
            return .failed(reason: .certificateNotYetValid, detail: detail)
        }
    }

    private static func expired(_ certificate: CertificateFacts) -> String {
        "certificate \(certificate.subject) expired at \(RFC3339Timestamp.seconds(certificate.notAfter))"
    }

    private static func notYetValid(_ certificate: CertificateFacts) -> String {
        "certificate \(certificate.subject) is not valid before \(RFC3339Timestamp.seconds(certificate.notBefore))"
    }
}

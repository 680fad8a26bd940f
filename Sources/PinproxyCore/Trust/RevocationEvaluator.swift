import Foundation

/// SPEC §2.1 `ocsp_stapling`, part of §2.3 step 2: a stapled "revoked"
/// blocks; under `"require"`, or for a must-staple leaf (RFC 7633 §4.2.3.1,
/// as Firefox enforces it), a missing or unusable staple blocks too. Reason
/// `certificate_revoked`. CRL findings arrive through `chainFailure`.
///
/// A staple still `pending` passes here: the handshake evaluates again once
/// the status callback has read it. `"off"` asks for no staple and ignores
/// must-staple with it: an operator's explicit choice.
public struct RevocationEvaluator: TrustEvaluator {
    public let mode: OCSPStaplingMode

    public init(mode: OCSPStaplingMode) {
        self.mode = mode
    }

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        guard mode != .off, let leaf = chain.verified?.first else { return .trusted }
        let mustStaple = leaf.profile?.requiresOCSPStaple == true
        let required = mode == .require || mustStaple
        let why = mode == .require ? "ocsp_stapling is \"require\"" : "the leaf is must-staple (TLS Feature status_request)"
        switch chain.staple {
        case .notRequested, .pending, .unavailableOffline, .good:
            return .trusted
        case .revoked(let detail):
            return .failed(reason: .certificateRevoked, detail: "stapled OCSP response: " + detail)
        case .absent where required:
            return .failed(reason: .certificateRevoked, detail: "no stapled OCSP response, and \(why)")
        case .unusable(let detail) where required:
            return .failed(reason: .certificateRevoked, detail: "stapled OCSP response unusable (\(detail)), and \(why)")
        case .absent, .unusable:
            return .trusted
        }
    }
}

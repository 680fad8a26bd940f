/// What the trust checks found about one handshake: the evidence, before any
/// decision about what to do with it (TrustKit's split; see `TrustDecision`).
///
/// A failed check is a value, never a thrown error: a server that presents a
/// bad chain is ordinary peer input.
public enum TrustEvaluation: Sendable, Hashable {
    /// Every check the policy asks for passed.
    case trusted
    /// The first check that failed (SPEC §2.3 order) and a human-readable
    /// sentence of evidence for the log, e.g. "no certificate in the validated
    /// chain matches a pinned public key".
    case failed(reason: ViolationReason, detail: String)

    /// The reason of a failure; nil when trusted.
    public var reason: ViolationReason? {
        switch self {
        case .trusted: nil
        case .failed(let reason, _): reason
        }
    }
}

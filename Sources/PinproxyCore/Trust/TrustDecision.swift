/// What to do about a `TrustEvaluation`: the value the verify callback turns
/// into its return code (SPEC §2.3, TrustKit's enforce / report-only split).
///
/// Invariant: a `.block` never permits the relay; `.allowAndReport` carries the
/// same reason and detail that `.block` would have, so report-only mode logs
/// exactly what enforcing mode would have blocked.
public enum TrustDecision: Sendable, Hashable {
    /// The evaluation passed (or the policy is `disable`): relay, log nothing.
    case allow
    /// The evaluation failed under `enforce: false`: log the violation with
    /// `"action": "reported"`, then relay anyway.
    case allowAndReport(reason: ViolationReason, detail: String)
    /// The evaluation failed under `enforce: true`: abort the handshake, log
    /// with `"action": "blocked"`, answer 502; nothing is relayed.
    case block(reason: ViolationReason, detail: String)

    /// Decides what to do with `evaluation`: trusted → allow; failed → block
    /// when `enforce`, else allow-and-report, for every reason (SPEC §2.3).
    public init(_ evaluation: TrustEvaluation, enforce: Bool) {
        switch evaluation {
        case .trusted:
            self = .allow
        case .failed(let reason, let detail):
            self = enforce ? .block(reason: reason, detail: detail)
                           : .allowAndReport(reason: reason, detail: detail)
        }
    }

    /// Whether the client's request may be written upstream.
    public var permitsRelay: Bool {
        switch self {
        case .allow, .allowAndReport: true
        case .block: false
        }
    }

    /// The violation to log; nil for `.allow`.
    public var reason: ViolationReason? {
        switch self {
        case .allow: nil
        case .allowAndReport(let reason, _), .block(let reason, _): reason
        }
    }

    /// The evidence sentence to log; nil for `.allow`.
    public var detail: String? {
        switch self {
        case .allow: nil
        case .allowAndReport(_, let detail), .block(_, let detail): detail
        }
    }
}

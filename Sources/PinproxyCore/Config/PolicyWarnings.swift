import Foundation

/// The legal-but-risky findings about one valid policy (SPEC §2.1, §2.3),
/// reported by `check` and at start: they do not stop pinproxy, but each one
/// is a way for pinning to fail open or to block a host after a key rotation.
public enum PolicyWarnings {
    /// How far ahead an `expires` date is announced.
    static let expiryNotice: TimeInterval = 30 * 24 * 3600

    static func check(_ policy: TrustPolicy, at path: JSONPath, into diagnostics: inout ConfigurationDiagnostics) {
        switch policy.kind {
        case .disable:
            diagnostics.warn(path, "policy \"disable\": no certificate evaluation at all for this host")
        case .pinPublicKeys where policy.learnsPins:
            diagnostics.warn(path.key("pins"), LearnedPins.firstUseWarning)
        case .pinPublicKeys where policy.pins.count + policy.publicKeyFiles.count < 2:
            diagnostics.warn(path.key(policy.pins.isEmpty ? "public_keys" : "pins"),
                             "only one pin, no backup pin: a key rotation on the server will block this host")
        case .pinCertificates where policy.certificateFiles.count < 2:
            diagnostics.warn(path.key("certificates"),
                             "only one pinned certificate, no backup: a certificate renewal will block this host")
        default:
            break
        }
        if !policy.validateChain {
            diagnostics.warn(path.key("validate_chain"), "validate_chain is false: trust and validity dates are not checked, only "
                                + (policy.kind == .custom ? "the command's verdict" : "the pins"))
        }
        if let message = expiryWarning(policy, at: diagnostics.now) { diagnostics.warn(path.key("expires"), message) }
    }

    /// The `expires` finding at `now`: passed, or within `expiryNotice`; nil otherwise.
    /// Said by `check`, at start and reload, and once a day by the daemon.
    public static func expiryWarning(_ policy: TrustPolicy, at now: Date) -> String? {
        guard let expires = policy.expires, [.pinPublicKeys, .pinCertificates, .custom].contains(policy.kind) else { return nil }
        let end = expires.firstExpiredInstant
        if expires.hasPassed(at: now) { return "pins expired on \(expires): they are no longer enforced" }
        guard end.timeIntervalSince(now) <= expiryNotice else { return nil }
        let days = Int((end.timeIntervalSince(now) / 86400).rounded(.up))
        return "pins expire on \(expires) (within \(days) days): after that they are not enforced"
    }
}

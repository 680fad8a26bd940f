import Foundation

/// The legal-but-risky findings about one valid policy (SPEC §2.1, §2.3),
/// reported by `check` and at start: they do not stop pinproxy, but each one
/// is a way for pinning to fail open or to block a host after a key rotation.
enum PolicyWarnings {
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
            diagnostics.warn(path.key("validate_chain"),
                             "validate_chain is false: trust and validity dates are not checked, only the pins")
        }
        if let expires = policy.expires, policy.kind == .pinPublicKeys || policy.kind == .pinCertificates {
            let end = expires.firstExpiredInstant
            if expires.hasPassed(at: diagnostics.now) {
                diagnostics.warn(path.key("expires"), "pins expired on \(expires): they are no longer enforced")
            } else if end.timeIntervalSince(diagnostics.now) <= expiryNotice {
                let days = Int((end.timeIntervalSince(diagnostics.now) / 86400).rounded(.up))
                diagnostics.warn(path.key("expires"),
                                 "pins expire on \(expires) (within \(days) days): after that they are not enforced")
            }
        }
    }
}

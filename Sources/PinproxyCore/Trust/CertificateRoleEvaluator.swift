import Foundation

/// The leaf must be a subscriber certificate for a TLS server (SPEC §2.3
/// step 2, "a leaf is not a CA"), checked over the verified chain.
///
/// - basicConstraints cA TRUE in the leaf is refused: CA/B Forum BR
///   §7.1.2.7.8 (subscriber certificates: cA MUST be false), as rustls-webpki
///   does. OpenSSL 3.0 accepts such a leaf when it lacks keyCertSign.
/// - extendedKeyUsage, when present, must not hold anyExtendedKeyUsage: BR
///   §7.1.2.7.10 ("MUST NOT" for subscriber certificates). OpenSSL's
///   `ssl_server` purpose already requires id-kp-serverAuth in it.
/// - A leaf without extendedKeyUsage is accepted, as RFC 5280 §4.2.1.12,
///   Chrome, Firefox and Go accept it; so is a critical one (BR §7.1.2.7.6
///   asks for non-critical, browsers do not check, and private CAs mark it
///   critical), and an EKU on a CA that includes serverAuth.
public struct CertificateRoleEvaluator: TrustEvaluator {
    public init() {}

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        guard let verified = chain.verified, verified.count > 1, let leaf = verified.first,
              let profile = leaf.profile else { return .trusted }
        if profile.isCA {
            return .failed(reason: .chainUntrusted,
                           detail: "the leaf certificate \(leaf.subject) is a CA certificate (basicConstraints cA TRUE)")
        }
        if let usages = profile.extendedKeyUsage, usages.contains(CertificateProfile.anyExtendedKeyUsage) {
            return .failed(reason: .chainUntrusted,
                           detail: "the leaf certificate \(leaf.subject) allows anyExtendedKeyUsage, which a TLS server certificate must not")
        }
        return .trusted
    }
}

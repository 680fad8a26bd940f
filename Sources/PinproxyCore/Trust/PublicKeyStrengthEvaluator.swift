import Foundation

/// Refuses weak or forbidden keys at every position of the verified chain,
/// anchor included (SPEC §2.3 step 2, "weak keys ... are refused").
///
/// The rule is the CA/B Forum BR §6.1.5: RSA with a modulus of at least 2048
/// bits whose size is divisible by 8, or ECDSA on P-256, P-384 or P-521 by
/// name. DSA is not among them, and neither Chrome nor Firefox verifies it.
/// Ed25519 and Ed448 are outside the BR but not weak: they are accepted for
/// private anchors. Every other algorithm is refused, explicit curve
/// parameters too. OpenSSL's security level 2 (applied in the handshake)
/// already refuses RSA below 2048 bits and P-192; this also covers the rest.
public struct PublicKeyStrengthEvaluator: TrustEvaluator {
    public static let namedCurves: Set<String> = ["P-256", "P-384", "P-521"]

    public init() {}

    public func evaluate(_ chain: PeerChain, now: Date) -> TrustEvaluation {
        guard let verified = chain.verified else { return .trusted }
        for certificate in verified {
            guard let key = certificate.profile?.publicKey, let problem = Self.problem(with: key) else { continue }
            return .failed(reason: .chainUntrusted, detail: "certificate \(certificate.subject) has \(problem)")
        }
        return .trusted
    }

    /// Why `key` is refused; nil when it is allowed.
    static func problem(with key: CertificateProfile.PublicKey) -> String? {
        switch key {
        case .rsa(let bits) where bits < 2048: "an RSA key of \(bits) bits (at least 2048 required)"
        case .rsa(let bits) where bits % 8 != 0: "an RSA key of \(bits) bits, not a multiple of 8"
        case .rsa, .edwards: nil
        case .ellipticCurve(let curve) where namedCurves.contains(curve): nil
        case .ellipticCurve(let curve): "an elliptic-curve key on \(curve) (P-256, P-384 or P-521 required)"
        case .explicitCurve: "an elliptic-curve key with explicit curve parameters"
        case .dsa(let bits): "a DSA key (\(bits) bits); DSA is not allowed"
        case .other(let name): "a \(name) key, which is not allowed"
        }
    }
}

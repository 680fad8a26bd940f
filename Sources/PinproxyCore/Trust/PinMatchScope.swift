/// Which certificates of a handshake a pin may match (SPEC §2.1, "Which
/// certificates a pin can match").
///
/// Never the served chain as such: a pinned certificate that an attacker merely
/// appends to what the server sends must not count.
public enum PinMatchScope: Sendable, Hashable {
    /// The chain OpenSSL built and verified (`SSL_get0_verified_chain`), so a
    /// pinned root the server does not send still matches. Used when `validate_chain` is true.
    case verifiedChain
    /// The leaf's signing path, trust and validity time not considered. Used
    /// when `validate_chain` is false (self-signed or expired-but-pinned servers).
    case signingPath

    /// The certificates of `chain` in this scope; empty when there is no
    /// verified chain (path validation failed), so nothing can match.
    public func certificates(of chain: PeerChain) -> [CertificateFacts] {
        switch self {
        case .verifiedChain: chain.verified ?? []
        case .signingPath: chain.signingPath
        }
    }

    /// The words the violation log uses for this scope.
    var phrase: String {
        switch self {
        case .verifiedChain: "the validated chain"
        case .signingPath: "the leaf's signing path"
        }
    }
}

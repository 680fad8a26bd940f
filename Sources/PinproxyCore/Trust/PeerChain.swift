/// Why path validation of a peer's chain failed, in the vocabulary of SPEC §2.3.
public enum ChainFailure: Sendable, Hashable {
    /// No path to a trusted anchor, a bad signature, a non-CA issuer, … `detail`
    /// carries OpenSSL's words for the log.
    case untrusted(detail: String)
    case expired
    case notYetValid
    /// A configured CRL lists a certificate of the chain (`detail` names it),
    /// or a CRL that covers it is unusable (expired, badly signed, …).
    case revoked(detail: String)
}

/// The facts of one upstream handshake that a trust evaluation needs, gathered
/// by the runtime inside the handshake (the verify callback) and handed to the
/// pure evaluators as a value.
public struct PeerChain: Sendable, Hashable {
    /// The certificates as the server sent them, leaf first.
    public var served: [CertificateFacts]
    /// The chain OpenSSL built and verified against the trust store (or the
    /// policy's anchors), leaf first, ending at the anchor; nil when path
    /// validation failed (see `chainFailure`).
    public var verified: [CertificateFacts]?
    /// Why path validation failed; nil when it succeeded.
    public var chainFailure: ChainFailure?
    /// The leaf and each issuer above it whose signature over the certificate
    /// below verifies, found among the served certificates (and pinned
    /// certificates), trust and validity time not considered. Pins are matched
    /// against this path when `validate_chain` is false, so a pinned
    /// certificate merely appended to the chain never counts.
    public var signingPath: [CertificateFacts]
    /// Whether the leaf matches the upstream host name (or IP), subject CN not consulted.
    public var hostMatches: Bool
    /// What the server's stapled OCSP response says about the leaf.
    public var staple: StapleStatus

    public init(served: [CertificateFacts], verified: [CertificateFacts]?, chainFailure: ChainFailure?,
                signingPath: [CertificateFacts], hostMatches: Bool, staple: StapleStatus = .notRequested) {
        self.served = served
        self.verified = verified
        self.chainFailure = chainFailure
        self.signingPath = signingPath
        self.hostMatches = hostMatches
        self.staple = staple
    }
}

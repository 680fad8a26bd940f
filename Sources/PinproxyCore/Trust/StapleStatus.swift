/// What the stapled OCSP response of a handshake established about the leaf
/// (SPEC §2.1 `ocsp_stapling`), as the runtime found it.
public enum StapleStatus: Sendable, Hashable {
    /// No staple was asked for (`ocsp_stapling: "off"`).
    case notRequested
    /// Asked for, not yet seen: the verify callback runs before TLS 1.2's
    /// CertificateStatus message, so the status callback decides later.
    case pending
    /// No connection was made (`pinproxy probe --chain`): nothing to staple.
    case unavailableOffline
    /// The server sent no staple.
    case absent
    /// A response that verifies, is current and says "good".
    case good
    /// A response that verifies, is current and says "revoked".
    case revoked(detail: String)
    /// A response that does not verify, is stale, is for another certificate,
    /// or says "unknown".
    case unusable(detail: String)
}

/// `ocsp_stapling` (SPEC §2.1).
public enum OCSPStaplingMode: String, Sendable, Hashable, CaseIterable {
    /// A stapled response is verified and a `revoked` status blocks.
    case check
    /// A missing or unverifiable staple blocks too.
    case require
    /// No staple is asked for or read.
    case off
}

/// Why a trust evaluation failed, in the vocabulary of SPEC §2.3 and §4.
///
/// The raw values are stable identifiers: they appear in the violation log
/// (`reason`), in `Proxy-Status: …; details="<reason>"` (SPEC §3) and in
/// `pinproxy tail --reason`. They are defined here and nowhere else.
public enum ViolationReason: String, Sendable, Hashable, CaseIterable {
    /// No certificate of the chain pins may match carries a pinned key or is a pinned certificate.
    case pinMismatch = "pin_mismatch"
    /// Path validation found no path to a trusted anchor (or a bad signature, a non-CA issuer, …).
    case chainUntrusted = "chain_untrusted"
    /// A certificate of the chain is past its `notAfter`.
    case certificateExpired = "certificate_expired"
    /// A certificate of the chain is before its `notBefore`.
    case certificateNotYetValid = "certificate_not_yet_valid"
    /// A certificate of the chain is revoked (a configured CRL, a stapled OCSP
    /// response), or its revocation status could not be established where the
    /// policy requires it (`ocsp_stapling: "require"`, must-staple, an unusable CRL).
    case certificateRevoked = "certificate_revoked"
    /// The leaf does not name the upstream host (or IP).
    case hostnameMismatch = "hostname_mismatch"
    /// `policy: "custom"`: the command exited 1 (its first line of output is the detail).
    case customRejected = "custom_rejected"
    /// `policy: "custom"`: the command gave no verdict: another exit status, a
    /// signal, the timeout, or it could not be started. Fails closed.
    case customFailed = "custom_failed"
}

import Foundation
internal import COpenSSL

/// The path-validation settings pinproxy adds to OpenSSL's, applied to every
/// `X509_STORE_CTX` that validates a peer: libssl's own in the handshake and
/// the one `probe --chain` sets up like it. The one place they are decided.
enum ChainVerificationParameters {
    /// Sets the flags, the CRLs and the tolerance callback on `context`.
    ///
    /// - `X509_V_FLAG_X509_STRICT`: RFC 5280 encoding rules (basic constraints
    ///   critical on CAs, AKI/SKI presence, …), which refuse x509-limbo's
    ///   missing-AKI/SKI, empty-SAN and inconsistent-extension chains.
    ///   Browsers do not apply these rules to trust anchors, and some of
    ///   Debian's roots break them (three with non-critical basicConstraints,
    ///   two without a subject key identifier), so `tolerance` forgives them on
    ///   certificates from the trust store, and the criticality of
    ///   basicConstraints everywhere.
    /// - With `crls`: `X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL`
    ///   against exactly those CRLs; a certificate none of them covers is not
    ///   refused for it (see `tolerance`).
    static func apply(to context: OpaquePointer, crls: RevocationListStack?) {
        guard let parameters = X509_STORE_CTX_get0_param(context) else { return }
        var flags = UInt(X509_V_FLAG_X509_STRICT)
        if let crls {
            flags |= UInt(X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL)
            // set0: the context only points at the stack, which the policy's material owns.
            X509_STORE_CTX_set0_crls(context, crls.pointer)
        }
        X509_VERIFY_PARAM_set_flags(parameters, flags)
        X509_STORE_CTX_set_verify_cb(context, tolerance)
    }

    /// Encoding rules of `X509_V_FLAG_X509_STRICT` that are not applied to a
    /// certificate the trust store supplied (an anchor). Chrome and Firefox do
    /// not read them on anchors either, and `RootProfileTests` shows the roots
    /// of Debian's bundle that would otherwise be refused. Key, signature,
    /// validity, trust, purpose and name checks stay in force on anchors.
    static let anchorTolerated: Set<Int32> = [
        X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER,
        X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, X509_V_ERR_AUTHORITY_KEY_IDENTIFIER_CRITICAL,
        X509_V_ERR_SUBJECT_KEY_IDENTIFIER_CRITICAL, X509_V_ERR_CA_CERT_MISSING_KEY_USAGE,
        X509_V_ERR_EMPTY_SUBJECT_ALT_NAME, X509_V_ERR_EMPTY_SUBJECT_SAN_NOT_CRITICAL,
        X509_V_ERR_PATHLEN_WITHOUT_KU_KEY_CERT_SIGN, X509_V_ERR_EXTENSIONS_REQUIRE_VERSION_3,
    ]

    /// Forgiven at every depth: a basicConstraints that is not marked critical.
    /// OpenSSL reads the extension either way, so the cA bit and pathLen are
    /// still enforced; the flag only tells clients that do not know the
    /// extension to refuse the certificate. Chrome, Firefox and Go accept such
    /// intermediates, and private CAs made from OpenSSL's usual configuration
    /// (`basicConstraints = CA:true`, as badssl.com's root and intermediate
    /// are) have them: refusing them would break real private sites.
    static let tolerated: Set<Int32> = [X509_V_ERR_CA_BCONS_NOT_CRITICAL]

    /// `X509_STORE_CTX_set_verify_cb`: OpenSSL asks it about each error it
    /// finds; 1 continues validation, 0 fails it. It forgives exactly:
    /// - `X509_V_ERR_UNABLE_TO_GET_CRL`: no configured CRL is for this
    ///   certificate's issuer (revocation is checked where one is, SPEC §2.1);
    /// - the `tolerated` errors;
    /// - the `anchorTolerated` errors at a depth the trust store supplied
    ///   (depth ≥ the number of certificates that came from the peer).
    static let tolerance: @convention(c) (Int32, OpaquePointer?) -> Int32 = { ok, context in
        guard ok == 0, let context else { return ok }
        let error = X509_STORE_CTX_get_error(context)
        if error == X509_V_ERR_UNABLE_TO_GET_CRL || tolerated.contains(error) { return 1 }
        if anchorTolerated.contains(error),
           X509_STORE_CTX_get_error_depth(context) >= X509_STORE_CTX_get_num_untrusted(context) {
            return 1
        }
        return 0
    }
}

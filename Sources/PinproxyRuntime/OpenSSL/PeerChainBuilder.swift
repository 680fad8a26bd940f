import Foundation
import PinproxyCore
internal import COpenSSL

/// The verification core, shared by the handshake callback and by tests (limbo): builds a PeerChain.
///
/// It only gathers facts (validated path or failure, host match, signing
/// path); what to do about them is the evaluators' business. Every field is
/// computed independently of the others, so a host mismatch is reported even
/// on an untrusted chain and vice versa.
enum PeerChainBuilder {
    /// Longest signing path followed from the leaf; a real chain is far shorter.
    static let maxSigningPathLength = 10

    /// Validates `leaf` + `untrusted` against `store` at `time` (nil = now) in a fresh
    /// context with pinproxy's store flags but no CRLs and no security level.
    /// What a handshake decides is `UpstreamHandshake.didReceiveCertificates`,
    /// which `OfflineHandshake` runs outside one.
    static func build(leaf: X509Certificate, untrusted: [X509Certificate], store: TrustStore, host: HostName?,
                      at time: Date?, pinnedCertificates: [X509Certificate]) -> PeerChain {
        do {
            let context = try X509StoreContext(store: store, leaf: leaf, untrusted: [leaf] + untrusted, at: time)
            ChainVerificationParameters.apply(to: context.pointer, crls: nil)
            return build(in: context.pointer, leaf: leaf, untrusted: untrusted, host: host,
                         pinnedCertificates: pinnedCertificates, staple: .notRequested)
        } catch {
            return facts(leaf: leaf, untrusted: untrusted, verified: nil,
                         failure: .untrusted(detail: String(describing: error)), host: host,
                         pinnedCertificates: pinnedCertificates)
        }
    }

    /// Runs `X509_verify_cert` in `context`, already initialised with `leaf` and
    /// `untrusted` (the handshake's own context, or a fresh one), then gathers the facts.
    /// The verified chain stays in `context`, so `SSL_get0_verified_chain` sees it too.
    static func build(in context: OpaquePointer, leaf: X509Certificate, untrusted: [X509Certificate],
                      host: HostName?, pinnedCertificates: [X509Certificate], staple: StapleStatus) -> PeerChain {
        ERR_clear_error()
        let isValid = X509_verify_cert(context) == 1
        ERR_clear_error()
        var verified: [X509Certificate]?
        var failure: ChainFailure?
        if isValid {
            // get1: the stack and its references are ours; pop_free releases both after wrapping.
            let chain = X509_STORE_CTX_get1_chain(context)
            verified = CertificateStack.certificates(in: chain)
            if let chain { shim_sk_X509_pop_free(chain) }
        } else {
            let subject = X509_STORE_CTX_get_current_cert(context).map { X509Certificate.rfc2253(X509_get_subject_name($0)) }
            failure = chainFailure(code: X509_STORE_CTX_get_error(context), subject: subject)
        }
        var chain = facts(leaf: leaf, untrusted: untrusted, verified: verified, failure: failure, host: host,
                          pinnedCertificates: pinnedCertificates)
        chain.staple = staple
        return chain
    }

    /// CRL problems: the revocation status of a certificate a CRL covers cannot be established.
    static let revocationErrors: Set<Int32> = [
        X509_V_ERR_CRL_SIGNATURE_FAILURE, X509_V_ERR_CRL_NOT_YET_VALID, X509_V_ERR_CRL_HAS_EXPIRED,
        X509_V_ERR_ERROR_IN_CRL_LAST_UPDATE_FIELD, X509_V_ERR_ERROR_IN_CRL_NEXT_UPDATE_FIELD,
        X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE, X509_V_ERR_KEYUSAGE_NO_CRL_SIGN,
        X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION, X509_V_ERR_DIFFERENT_CRL_SCOPE,
        X509_V_ERR_CRL_PATH_VALIDATION_ERROR, X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER,
    ]

    /// Maps an `X509_V_ERR_*` code onto the vocabulary of SPEC §2.3; `subject`
    /// names the certificate OpenSSL was looking at.
    static func chainFailure(code: Int32, subject: String? = nil) -> ChainFailure {
        let words = String(cString: X509_verify_cert_error_string(Int(code)))
        let which = subject.map { "certificate \($0)" } ?? "a certificate of the chain"
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: return .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid
        case X509_V_ERR_CERT_REVOKED: return .revoked(detail: "\(which) is revoked by a configured CRL")
        case _ where revocationErrors.contains(code):
            return .revoked(detail: "revocation status of \(which) unknown: \(words)")
        default: return .untrusted(detail: words)
        }
    }

    /// Whether `leaf` names `host`: SAN dNSName/iPAddress only, subject CN never
    /// consulted (RFC 6125 §6.4.4 lets clients drop the CN fallback; browsers have),
    /// and no partial-label wildcards such as `f*o.example.com` (RFC 6125 §7.2).
    static func matches(_ leaf: X509Certificate, host: HostName) -> Bool {
        if host.isIPAddress {
            return X509_check_ip_asc(leaf.pointer, host.value, 0) == 1
        }
        let flags = UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS)
        return X509_check_host(leaf.pointer, host.value, host.value.utf8.count, flags, nil) == 1
    }

    /// The leaf and each issuer above it whose signature over the certificate
    /// below verifies, among `candidates`; stops at a self-signed certificate,
    /// when no issuer is found, or after `maxSigningPathLength` certificates.
    private static func signingPath(from leaf: X509Certificate, candidates: [X509Certificate],
                                    memo: inout FactsMemo) -> [X509Certificate] {
        var path = [leaf]
        var current = leaf
        while path.count < maxSigningPathLength, !isIssuer(current, of: current, memo: &memo) {
            let issuer = candidates.first { candidate in
                !path.contains { $0.isSame(as: candidate) } && isIssuer(candidate, of: current, memo: &memo)
            }
            guard let issuer else { break }
            path.append(issuer)
            current = issuer
        }
        return path
    }

    /// Whether `issuer` names `child`'s issuer and its key verifies `child`'s
    /// signature; the (costly) verification is remembered by fingerprints.
    private static func isIssuer(_ issuer: X509Certificate, of child: X509Certificate, memo: inout FactsMemo) -> Bool {
        guard X509_NAME_cmp(X509_get_issuer_name(child.pointer), X509_get_subject_name(issuer.pointer)) == 0,
              let key = X509_get0_pubkey(issuer.pointer) else { return false }
        return SignatureCheckCache.shared.verifies(child: memo.facts(of: child).certificateSHA256,
                                                   issuer: memo.facts(of: issuer).certificateSHA256) {
            let verifies = X509_verify(child.pointer, key) == 1
            ERR_clear_error()
            return verifies
        }
    }

    private static func facts(leaf: X509Certificate, untrusted: [X509Certificate], verified: [X509Certificate]?,
                              failure: ChainFailure?, host: HostName?,
                              pinnedCertificates: [X509Certificate]) -> PeerChain {
        var memo = FactsMemo()
        let served = [leaf] + untrusted
        let path = signingPath(from: leaf, candidates: served + pinnedCertificates, memo: &memo)
        return PeerChain(served: served.map { memo.facts(of: $0) },
                         verified: verified?.map { memo.facts(of: $0) },
                         chainFailure: failure,
                         signingPath: path.map { memo.facts(of: $0) },
                         hostMatches: host.map { matches(leaf, host: $0) } ?? false)
    }
}

/// The facts of each certificate met while building one PeerChain, computed
/// once: the served, verified and signing-path lists mostly hold the same
/// `X509` objects, and each `facts` encodes, hashes and prints the certificate.
private struct FactsMemo {
    private var entries: [(pointer: OpaquePointer, facts: CertificateFacts)] = []

    mutating func facts(of certificate: X509Certificate) -> CertificateFacts {
        if let known = entries.first(where: { $0.pointer == certificate.pointer }) { return known.facts }
        let facts = certificate.facts
        entries.append((certificate.pointer, facts))
        return facts
    }
}

import Foundation
import PinproxyCore
internal import COpenSSL

/// Per-connection verification state, reached from the verify callback through SSL ex_data.
///
/// Lives on the connection's event-loop thread. The `SSL` holds an
/// *unretained* pointer to it (see `TLSClientContext.makeConnection`): whoever creates
/// the `SSL` must keep this object alive until the `SSL` is freed.
final class UpstreamHandshake {
    let host: HostName
    let port: UInt16
    /// The policy's one check (`PreparedPolicy.check`), built with the configuration.
    let check: TrustCheck
    let material: PolicyMaterial
    var policy: TrustPolicy { check.policy }

    /// The handshake's verdict: nil before the verify callback ran, while a
    /// custom rule's command is being asked, and for a resumed session (no
    /// verification happens in one). Set again by the
    /// status callback once the OCSP staple is in. The one value the
    /// connector, the session and `probe` read.
    private(set) var verdict: TrustVerdict?
    /// What the staple is while the certificates are verified: the status
    /// callback runs later (after TLS 1.2's CertificateStatus, after TLS 1.3's
    /// server Finished). `probe --chain` sets `.unavailableOffline`.
    var stapleBeforeStatus: StapleStatus
    /// The store OCSP responses are verified against (the policy's anchors, else the system store).
    let trustStore: TrustStore?
    /// Receives every session the server issues (TLS 1.2 at the end of the handshake,
    /// TLS 1.3 tickets after it); nil = sessions are not kept.
    var onNewSession: ((TLSSessionHandle) -> Void)?

    init(host: HostName, port: UInt16, check: TrustCheck, material: PolicyMaterial, trustStore: TrustStore? = nil,
         custom: CustomEvaluation? = nil) {
        self.host = host
        self.port = port
        self.check = check
        self.custom = custom
        self.material = material
        self.trustStore = trustStore
        stapleBeforeStatus = check.policy.ocspStapling == .off ? .notRequested : .pending
    }

    /// The time validity is judged at: now (nil), or what `probe --chain --at` names.
    var evaluationTime: Date?
    /// The check is a learning rule's first-use check (SPEC §2.1 `"pins": "learn"`):
    /// the chain it accepts is offered to the rule's learned pins once the
    /// handshake is done (`PinLearning.learn`), not here, where a later
    /// callback (the OCSP staple's) may still refuse it.
    var learnsPins = false

    /// `policy: "custom"`: the rule's way to its command; nil for every other policy.
    let custom: CustomEvaluation?
    /// The address connected to (`PINPROXY_PEER_ADDRESS`), set before the handshake starts.
    var peerAddress: String?
    /// The command's verdict on the chain `customKey` names, once it is in.
    var customVerdict: CustomVerdict?
    private var customKey: CustomCheckKey?
    /// The question the verify callback could not answer yet: the command
    /// must be asked, and the handshake continued once it has answered.
    private(set) var pendingCustomRequest: CustomCheckRequest?
    /// Called inside the verify callback with `pendingCustomRequest`, which
    /// the handshake is suspended for (OpenSSL's retry-verify); the caller
    /// asks the command, sets `customVerdict` and resumes the handshake.
    /// Nil offline (`OfflineHandshake` asks and evaluates again itself).
    var onCustomVerdictNeeded: ((CustomCheckRequest) -> Void)?

    /// Runs the check and keeps its verdict; true when the request may be relayed.
    /// A custom rule's chain that passed every other check needs the
    /// command's verdict: the one in, a cached one, or else nil (ask).
    private func decide(_ chain: PeerChain) -> Bool? {
        let now = evaluationTime ?? Date()
        var known: CustomVerdict?
        if let custom, check.asksCommand(at: now) {
            let key = custom.key(for: chain, host: host, port: port)
            known = customKey == key ? customVerdict : custom.cache.verdict(for: key)
            if known == nil { pendingCustomRequest = custom.request(key, chain: chain, host: host, port: port, peer: peerAddress) }
            customKey = key
            customVerdict = known
        }
        guard let decided = check.verdict(for: chain, now: now, custom: known) else { return nil }
        pendingCustomRequest = nil
        verdict = decided
        return decided.decision.permitsRelay
    }

    /// The body of the certificate-verify callback: validates the served chain in
    /// `storeContext` (set up by libssl with the context's trust store and the
    /// served certificates), runs the policy's check over the facts, and turns
    /// the verdict into OpenSSL's 0/1. This is the only place where a decision
    /// becomes a return code.
    func didReceiveCertificates(in storeContext: OpaquePointer) -> Int32 {
        // SPEC §2.3 step 1: `disable` gathers nothing; its check accepts.
        guard check.examinesChain else {
            return decide(PeerChain(served: [], verified: nil, chainFailure: nil, signingPath: [], hostMatches: false)) == true ? 1 : 0
        }
        guard let leafPointer = X509_STORE_CTX_get0_cert(storeContext) else {
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
        let leaf = X509Certificate(retaining: leafPointer)
        // libssl passes the whole served chain (leaf first) as the untrusted stack.
        let served = CertificateStack.certificates(in: X509_STORE_CTX_get0_untrusted(storeContext))
        let untrusted = served.first.map { $0.isSame(as: leaf) } == true ? Array(served.dropFirst()) : served
        ChainVerificationParameters.apply(to: storeContext, crls: material.revocationLists)
        let chain = PeerChainBuilder.build(in: storeContext, leaf: leaf, untrusted: untrusted, host: host,
                                           pinnedCertificates: material.pinnedCertificates, staple: stapleBeforeStatus)
        guard let permits = decide(chain) else { return suspendForCustomVerdict(storeContext, chain: chain) }
        guard permits else {
            // Aborts the handshake with an alert before any application byte is written.
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
        // The policy accepted (perhaps despite a chain failure, e.g. validate_chain false):
        // clear the error so libssl records the verify result as OK.
        X509_STORE_CTX_set_error(storeContext, X509_V_OK)
        return 1
    }

    /// OpenSSL 3's retry-verify (SPEC §2.1): the handshake stops with
    /// `SSL_ERROR_WANT_RETRY_VERIFY`, nothing is sent, and the next
    /// `SSL_do_handshake` calls the verify callback again, which then finds
    /// `customVerdict`. Offline (no SSL) the callback fails without a
    /// verdict: `OfflineHandshake` sees the pending request and asks. A live
    /// handshake that cannot wait fails closed with `custom_failed`.
    private func suspendForCustomVerdict(_ storeContext: OpaquePointer, chain: PeerChain) -> Int32 {
        let ssl = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx())
        if let ssl, let request = pendingCustomRequest, let onCustomVerdictNeeded,
           shim_SSL_set_retry_verify(OpaquePointer(ssl)) == 1 {
            onCustomVerdictNeeded(request)
            return 1
        }
        if ssl != nil {
            customVerdict = .failed(detail: "the handshake cannot wait for the custom command")
            _ = decide(chain)
        }
        X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
        return 0
    }

    /// The body of the OCSP status callback (`SSL_CTX_set_tlsext_status_cb`),
    /// which libssl calls once the server's flight is in, staple or not: reads
    /// the staple against the verified chain, records it in the chain's facts
    /// and runs the check over the whole chain again. 0 aborts the handshake with
    /// an alert, before any application byte is written.
    func didReceiveStatus(of ssl: OpaquePointer) -> Int32 {
        // Nothing was verified (resumed session, `disable`): nothing to judge.
        guard check.examinesChain, var chain = verdict?.chain, policy.ocspStapling != .off else { return 1 }
        var response: UnsafePointer<UInt8>?
        let length = shim_SSL_get_tlsext_status_ocsp_resp(ssl, &response)
        let verified = CertificateStack.certificates(in: SSL_get0_verified_chain(ssl))
        if let response, length > 0 {
            let bytes = Array(UnsafeBufferPointer(start: response, count: length))
            if verified.count >= 2, let store = trustStore {
                chain.staple = OCSPStaple.status(of: bytes, leaf: verified[0], issuer: verified[1],
                                                 chain: verified, store: store)
            } else {
                chain.staple = .unusable(detail: "no verified issuer to check it against")
            }
        } else {
            chain.staple = .absent
        }
        // The command answered before the status callback runs (it runs after
        // the verify callback accepted), so a custom rule decides here too.
        return decide(chain) == true ? 1 : 0
    }

    /// The body of the new-session callback: hands a private copy of `session` to `onNewSession`.
    ///
    /// A copy, not OpenSSL's object: libssl marks the session of an `SSL` freed
    /// without a sent close_notify as not resumable (`SSL_CTX_remove_session`),
    /// which is how most pooled connections end (the server times them out).
    /// Since TLS 1.1 an unclean close no longer forbids resumption (RFC 5246
    /// §7.2.1; RFC 8446 §6.1), so the copy stays usable. OpenSSL keeps managing
    /// its own reference to the original.
    func didReceive(session: OpaquePointer) {
        // SSL_SESSION_dup returns a new object with one reference, adopted by the handle.
        guard let onNewSession, let copy = SSL_SESSION_dup(session) else { return }
        onNewSession(TLSSessionHandle(takingOwnership: copy))
    }
}

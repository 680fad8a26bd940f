import PinproxyCore
internal import COpenSSL

/// One SSL_CTX per distinct TLS settings of the host entries (`TLSClientContextCache`).
///
/// The single owner of an `SSL_CTX*`, freed in `deinit`. Every setting below
/// is policy, decided here in Swift and documented where it is made; the C
/// shims only forward. Immutable after `init`, so connections on any loop may
/// create `SSL`s from it.
final class TLSClientContext: @unchecked Sendable {
    /// The owned `SSL_CTX*`; never null.
    let pointer: OpaquePointer
    let policy: TrustPolicy
    let material: PolicyMaterial
    /// The store chains are validated against (the policy's anchors, else the system store).
    let trustStore: TrustStore

    /// TLS 1.2 suites with ephemeral ECDH key exchange and AEAD only (RFC 7525 §4.2);
    /// TLS 1.3 suites are always forward-secret and set separately by OpenSSL.
    static let forwardSecretCipherList = "ECDHE+AESGCM:ECDHE+CHACHA20"

    /// The ALPN protocol list in wire form (RFC 7301 §3.1): pinproxy speaks HTTP/1.1 upstream only.
    static let alpnProtocols: [UInt8] = [8] + Array("http/1.1".utf8)

    init(policy: TrustPolicy, material: PolicyMaterial, trustStore: TrustStore) throws {
        ERR_clear_error()
        guard let pointer = SSL_CTX_new(TLS_client_method()) else { throw OpenSSLError.drain("SSL_CTX_new") }
        self.pointer = pointer
        self.policy = policy
        self.material = material
        // `anchors` replaces the system store entirely (SPEC §2.1).
        self.trustStore = policy.kind == .anchors ? (material.anchorStore ?? trustStore) : trustStore
        try configureProtocol()
        configureVerification()
        try configureClientCertificate()
        configureSessions()
    }

    deinit { SSL_CTX_free(pointer) }

    /// Version floor, cipher suites, ALPN, options and modes.
    private func configureProtocol() throws {
        // min_tls_version (SPEC §2.1); SSL 3.0 to TLS 1.1 are never negotiated (RFC 8996).
        let floor = policy.minTLSVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        guard shim_SSL_CTX_set_min_proto_version(pointer, floor) == 1 else {
            throw OpenSSLError.drain("set minimum TLS version \(policy.minTLSVersion.rawValue)")
        }
        // require_forward_secrecy: TLS 1.2 only with ECDHE key exchange.
        if policy.requireForwardSecrecy,
           SSL_CTX_set_cipher_list(pointer, Self.forwardSecretCipherList) != 1 {
            throw OpenSSLError.drain("set cipher list \(Self.forwardSecretCipherList)")
        }
        // SSL_CTX_set_alpn_protos returns 0 on success.
        let alpnStatus = Self.alpnProtocols.withUnsafeBufferPointer {
            SSL_CTX_set_alpn_protos(pointer, $0.baseAddress, UInt32($0.count))
        }
        guard alpnStatus == 0 else { throw OpenSSLError.drain("set ALPN http/1.1") }
        // No compression (CRIME); no renegotiation (RFC 7457 §2.2), which pinproxy never needs.
        SSL_CTX_set_options(pointer, shim_SSL_OP_NO_COMPRESSION | shim_SSL_OP_NO_RENEGOTIATION)
        // SSL_MODE_RELEASE_BUFFERS: an idle pooled connection gives back its
        // ~33 KiB of record buffers. Without it the pool (one connection per
        // concurrent exchange, kept) cost 0.4 KiB per held client connection
        // in `bench --memory`. Reallocating them per exchange is cheap since
        // freed heap is kept (`AllocatorTuning`): callgrind, keep-alive GETs,
        // +1.3k instructions per request.
        _ = shim_SSL_CTX_set_mode(pointer, shim_SSL_MODE_RELEASE_BUFFERS)
        // Read-ahead is turned on per connection once it is verified
        // (`UpstreamConnection`, `TLSStream.enableReadAhead`).
        // Early data (0-RTT, RFC 8446 §2.3) is never sent: it is replayable, and it would
        // leave before the verdict. Nothing calls SSL_write_early_data, so none can be sent.
    }

    /// Certificate checks: the trust store, and the callback that replaces
    /// `X509_verify_cert` with validation + the policy decision.
    private func configureVerification() {
        // set1: the SSL_CTX takes its own reference to the store.
        SSL_CTX_set1_cert_store(pointer, trustStore.pointer)
        // SSL_VERIFY_PEER: a failed verification aborts the handshake with an alert.
        SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        // No user pointer is needed: the callback finds its handshake through the SSL's ex_data.
        SSL_CTX_set_cert_verify_callback(pointer, Self.verifyTrampoline, nil)
        // ocsp_stapling (SPEC §2.1): each SSL asks for a staple (`makeConnection`), read by the status callback.
        if policy.ocspStapling != .off, policy.kind != .disable {
            _ = shim_SSL_CTX_set_tlsext_status_cb(pointer, Self.statusTrampoline)
        }
    }

    /// A client certificate only for host entries configured with one (SPEC §2.1);
    /// otherwise a callback that supplies none, so a server asking gets nothing.
    private func configureClientCertificate() throws {
        guard let key = material.clientKey, let certificate = material.clientCertificateChain.first else {
            SSL_CTX_set_client_cert_cb(pointer, Self.noClientCertificateTrampoline)
            return
        }
        ERR_clear_error()
        // use_certificate / use_PrivateKey / SSL_CTRL_CHAIN_CERT with 1 all take their own references.
        guard SSL_CTX_use_certificate(pointer, certificate.pointer) == 1,
              SSL_CTX_use_PrivateKey(pointer, key.pointer) == 1 else {
            throw OpenSSLError.drain("install client certificate \(certificate.facts.subject)")
        }
        for intermediate in material.clientCertificateChain.dropFirst()
        where SSL_CTX_ctrl(pointer, SSL_CTRL_CHAIN_CERT, 1, UnsafeMutableRawPointer(intermediate.pointer)) != 1 {
            throw OpenSSLError.drain("add client chain certificate \(intermediate.facts.subject)")
        }
    }

    /// Client-side session cache without OpenSSL's internal store: each new session goes
    /// to the handshake's `onNewSession`, and the pool decides which one to offer next.
    private func configureSessions() {
        _ = shim_SSL_CTX_set_session_cache_mode(pointer, shim_SSL_SESS_CACHE_CLIENT | shim_SSL_SESS_CACHE_NO_INTERNAL_STORE)
        SSL_CTX_sess_set_new_cb(pointer, Self.newSessionTrampoline)
    }

    /// A new client connection, in connect state, owned by the returned
    /// `TLSConnection` (the one place its `SSL` is freed, on every path).
    ///
    /// SNI is `handshake.host` unless it is an IP literal (RFC 6066 §3 forbids those).
    /// The SSL's ex_data holds an UNRETAINED pointer to `handshake`: the caller keeps
    /// the handshake alive for longer than the connection (`UpstreamConnection`
    /// owns both and closes its stream first). `session`, if any, is offered for
    /// resumption; it must come from this context.
    func makeConnection(for handshake: UpstreamHandshake, resuming session: TLSSessionHandle?) throws -> TLSConnection {
        ERR_clear_error()
        guard let ssl = SSL_new(pointer) else { throw OpenSSLError.drain("SSL_new for \(handshake.host)") }
        let connection = TLSConnection(takingOwnership: ssl)
        // Unretained: see above; the callbacks only run while the SSL is alive.
        let context = Unmanaged.passUnretained(handshake).toOpaque()
        guard SSL_set_ex_data(ssl, Self.handshakeIndex, context) == 1 else {
            throw OpenSSLError.drain("attach handshake to SSL for \(handshake.host)")
        }
        if !handshake.host.isIPAddress, shim_SSL_set_tlsext_host_name(ssl, handshake.host.value) != 1 {
            throw OpenSSLError.drain("set SNI \(handshake.host)")
        }
        if policy.ocspStapling != .off, policy.kind != .disable,
           shim_SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp) != 1 {
            throw OpenSSLError.drain("ask \(handshake.host) for an OCSP staple")
        }
        // SSL_set_session takes its own reference to the session.
        if let session, SSL_set_session(ssl, session.pointer) != 1 {
            throw OpenSSLError.drain("offer session to \(handshake.host)")
        }
        SSL_set_connect_state(ssl)
        return connection
    }

    /// The SSL ex_data slot holding the unretained `UpstreamHandshake`; allocated once per process.
    static let handshakeIndex: Int32 = shim_SSL_get_ex_new_index()

    /// The handshake attached to `ssl` by `makeConnection`; borrowed, not retained.
    static func handshake(of ssl: OpaquePointer?) -> UpstreamHandshake? {
        guard let ssl, let context = SSL_get_ex_data(ssl, handshakeIndex) else { return nil }
        return Unmanaged<UpstreamHandshake>.fromOpaque(context).takeUnretainedValue()
    }

    /// `SSL_CTX_set_cert_verify_callback`: reaches the SSL through the store context's
    /// ex_data, then its handshake, and calls `didReceiveCertificates`. An SSL without
    /// a handshake (not made by `makeConnection`) is refused.
    static let verifyTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, _ in
        guard let storeContext else { return 0 }
        let ssl = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx())
        guard let handshake = handshake(of: OpaquePointer(ssl)) else {
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
        return handshake.didReceiveCertificates(in: storeContext)
    }

    /// `SSL_CTX_set_tlsext_status_cb`: the handshake reads the staple; 1 goes on, 0 aborts
    /// the handshake. An SSL without a handshake is refused.
    static let statusTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { ssl, _ in
        guard let ssl, let handshake = handshake(of: ssl) else { return 0 }
        return handshake.didReceiveStatus(of: ssl)
    }

    /// `SSL_CTX_sess_set_new_cb`: the handshake keeps a copy (see `didReceive(session:)`),
    /// so this returns 0 and OpenSSL manages its own reference as usual.
    static let newSessionTrampoline: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        if let session, let handshake = handshake(of: ssl) { handshake.didReceive(session: session) }
        return 0
    }

    /// `SSL_CTX_set_client_cert_cb`: 0 = no client certificate, the handshake continues without one.
    static let noClientCertificateTrampoline: @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<OpaquePointer?>?
    ) -> Int32 = { _, _, _ in 0 }
}

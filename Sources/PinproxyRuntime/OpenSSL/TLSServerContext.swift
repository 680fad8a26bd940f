import PinproxyCore
internal import COpenSSL

/// The client-facing TLS of intercepted CONNECTs (SPEC §3.1): one `SSL_CTX`
/// per loaded CA generation, shared by every event loop.
///
/// The single owner of its `SSL_CTX*`, freed in `deinit`; immutable after
/// `init`, so any loop may make connections from it. Each connection gets
/// its host's leaf, the shared leaf key and the issuing certificate (the
/// chain) in one call, and the name its SNI must carry.
///
/// Settings, each decided here:
/// - TLS 1.2 minimum (RFC 8996, RFC 9325 §3.1.1); TLS 1.3 is preferred as
///   OpenSSL always negotiates the highest shared version.
/// - Forward secrecy only: TLS 1.2 suites with ECDHE and AEAD
///   (`TLSClientContext.forwardSecretCipherList`), key exchange groups
///   X25519, P-256 and P-384 (no finite-field DH, RFC 9325 §4.1); TLS 1.3
///   suites are OpenSSL's defaults, all AEAD and all (EC)DHE.
/// - Session tickets on, stateless: a reconnecting client resumes without a
///   signature. The ticket key is random per `SSL_CTX`, so a ticket never
///   outlives its CA generation; no server-side session cache is kept.
///   One TLS 1.3 ticket after a full handshake, not OpenSSL's two (as Go's
///   server): each costs a session copy, its encoding and encryption, and
///   one instead of two took a new intercepted connection's CPU from
///   386-404 to 356-368 µs (`bench/connect.sh`). A client that resumes offers
///   the newest ticket it holds, which each resumption renews; a second
///   connection opened at the same moment as the first resumption may pay a
///   full handshake.
/// - No early data (RFC 8446 §8: replayable): `max_early_data` 0, and the
///   stream never calls `SSL_read_early_data`.
/// - ALPN: `http/1.1` only (`selectProtocol`).
/// - SNI: must equal the connection's expected host (`serverNameTrampoline`).
final class TLSServerContext: @unchecked Sendable {
    /// The owned `SSL_CTX*`; never null.
    let pointer: OpaquePointer
    /// What every connection presents beside its leaf (`makeConnection`).
    /// Read-only once set: any loop may install them at once, as
    /// `SSL_use_cert_and_key` only takes references (and copies the stack).
    private let key: PrivateKey
    private let chain: CertificateStack

    /// Ephemeral key exchange groups, in preference order; OpenSSL 3.0 has
    /// no hybrid post-quantum group, so a client offering one first gets a
    /// HelloRetryRequest for X25519.
    static let groups = "X25519:P-256:P-384"

    /// `chain`: what is sent after the leaf (the issuing certificate, not the
    /// root clients already hold); `key`: the private key of every leaf.
    init(chain: [X509Certificate], key: PrivateKey) throws {
        ERR_clear_error()
        guard let stack = CertificateStack(chain) else { throw OpenSSLError.drain("chain of the interception leaves") }
        guard let pointer = SSL_CTX_new(TLS_server_method()) else { throw OpenSSLError.drain("SSL_CTX_new server") }
        self.pointer = pointer
        self.key = key
        self.chain = stack
        try configureProtocol()
        configureSessions()
        configureCallbacks()
    }

    deinit { SSL_CTX_free(pointer) }

    private func configureProtocol() throws {
        guard shim_SSL_CTX_set_min_proto_version(pointer, TLS1_2_VERSION) == 1 else {
            throw OpenSSLError.drain("set minimum TLS version 1.2")
        }
        guard SSL_CTX_set_cipher_list(pointer, TLSClientContext.forwardSecretCipherList) == 1 else {
            throw OpenSSLError.drain("set cipher list \(TLSClientContext.forwardSecretCipherList)")
        }
        guard shim_SSL_CTX_set1_groups_list(pointer, Self.groups) == 1 else {
            throw OpenSSLError.drain("set groups \(Self.groups)")
        }
        // No compression (CRIME); no renegotiation (RFC 7457 §2.2): a client never needs it here.
        SSL_CTX_set_options(pointer, shim_SSL_OP_NO_COMPRESSION | shim_SSL_OP_NO_RENEGOTIATION)
        // As upstream: an idle kept-alive client connection gives back its record buffers.
        // NO_AUTO_CHAIN: the chain is exactly the one set below, never one built from a store.
        _ = shim_SSL_CTX_set_mode(pointer, shim_SSL_MODE_RELEASE_BUFFERS | shim_SSL_MODE_NO_AUTO_CHAIN)
        guard SSL_CTX_set_max_early_data(pointer, 0) == 1 else { throw OpenSSLError.drain("disable early data") }
    }

    private func configureSessions() {
        // Stateless tickets only: no session cache to grow or to share between loops.
        _ = shim_SSL_CTX_set_session_cache_mode(pointer, shim_SSL_SESS_CACHE_OFF)
        // One ticket a full handshake (see above); a resumption sends one anyway.
        _ = SSL_CTX_set_num_tickets(pointer, 1)
    }

    private func configureCallbacks() {
        _ = shim_SSL_CTX_set_tlsext_servername_callback(pointer, Self.serverNameTrampoline)
        SSL_CTX_set_alpn_select_cb(pointer, Self.alpnTrampoline, nil)
    }

    /// A new server connection in accept state, owned by the returned
    /// `TLSConnection`, presenting `certificate` (a leaf for `host` binding
    /// the shared key) and refusing a ClientHello whose SNI is not `host`.
    ///
    /// The SSL's ex_data holds an UNRETAINED pointer to the connection that
    /// owns it: the `SSL` is freed in that object's `deinit`, so the pointer
    /// is valid whenever a callback of this `SSL` runs.
    func makeConnection(presenting certificate: X509Certificate, for host: HostName) throws -> TLSConnection {
        ERR_clear_error()
        guard let ssl = SSL_new(pointer) else { throw OpenSSLError.drain("SSL_new for client of \(host)") }
        let connection = TLSConnection(takingOwnership: ssl, expectedServerName: host)
        guard SSL_set_ex_data(ssl, Self.connectionIndex, Unmanaged.passUnretained(connection).toOpaque()) == 1 else {
            throw OpenSSLError.drain("attach connection to SSL for \(host)")
        }
        // Leaf, key and chain in one call, which takes its own references and
        // checks that the leaf binds the key. Not the key and chain on the
        // context and `SSL_use_certificate` here: the leaf's public key is
        // EC_KEY-backed (`CertificatePublicKey`) and the private key a
        // provider's, and `SSL_use_certificate` then copies the curve's
        // parameters between the two, rebuilding the group each time: about
        // 38 µs a connection against 5 µs this way (OpenSSL 3.0.19).
        guard SSL_use_cert_and_key(ssl, certificate.pointer, key.pointer, chain.pointer, 1) == 1 else {
            throw OpenSSLError.drain("install the leaf for \(host)")
        }
        SSL_set_accept_state(ssl)
        return connection
    }

    /// The SSL ex_data slot holding the unretained owning `TLSConnection`; allocated once per process.
    static let connectionIndex: Int32 = shim_SSL_get_ex_new_index()

    /// `SSL_CTX_set_tlsext_servername_callback`. OpenSSL (1.1.1 and later)
    /// calls it for every ClientHello, with or without a server_name
    /// extension: `final_server_name` in `ssl/statem/extensions.c` is the
    /// extension's finaliser, which runs whether or not the extension was
    /// sent (`TLSServerContextTests` checks the no-SNI case). A refusal sends
    /// `unrecognized_name` (RFC 6066 §3) as a fatal alert.
    static let serverNameTrampoline: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?, UnsafeMutableRawPointer?) -> Int32 = { ssl, alert, _ in
        guard let ssl, let context = SSL_get_ex_data(ssl, connectionIndex) else {
            alert?.pointee = SSL_AD_INTERNAL_ERROR
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
        let connection = Unmanaged<TLSConnection>.fromOpaque(context).takeUnretainedValue()
        let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
        guard connection.didReceiveServerName(name) else {
            alert?.pointee = SSL_AD_UNRECOGNIZED_NAME
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
        return SSL_TLSEXT_ERR_OK
    }

    /// `SSL_CTX_set_alpn_select_cb`: `http/1.1` when the client offers it.
    ///
    /// A client that offers ALPN without `http/1.1` (only `h2`, say) gets no
    /// ALPN at all (NOACK) rather than RFC 7301 §3.2's fatal
    /// `no_application_protocol`: HTTP/1.1 over TLS predates ALPN and needs
    /// none, so a client that can fall back does, and one that cannot (h2
    /// needs ALPN, RFC 9113 §3.2) closes the tunnel itself, where an alert
    /// would only turn both into a handshake failure the client does not
    /// explain. Whatever the client then sends meets the HTTP/1.1 parser.
    static let alpnTrampoline: @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, out, outLength, offered, offeredLength, _ in
        guard let out, let outLength, let offered,
              let offset = offset(of: TLSServerContext.http11, in: UnsafeBufferPointer(start: offered, count: Int(offeredLength)))
        else { return SSL_TLSEXT_ERR_NOACK }
        // The selection points into the client's list, which OpenSSL keeps until it copies it.
        out.pointee = offered + offset
        outLength.pointee = UInt8(TLSServerContext.http11.count)
        return SSL_TLSEXT_ERR_OK
    }

    private static let http11 = Array("http/1.1".utf8)

    /// Where `protocolName` starts in an ALPN wire list (length-prefixed
    /// entries, RFC 7301 §3.1); nil when absent or the list is malformed.
    static func offset(of protocolName: [UInt8], in list: UnsafeBufferPointer<UInt8>) -> Int? {
        var index = 0
        while index < list.count {
            let length = Int(list[index])
            let start = index + 1
            guard length > 0, start + length <= list.count else { return nil }
            if length == protocolName.count && list[start..<start + length].elementsEqual(protocolName) { return start }
            index = start + length
        }
        return nil
    }
}

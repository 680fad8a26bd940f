import Foundation
internal import COpenSSL

/// One path validation outside a handshake: the single owner of an
/// `X509_STORE_CTX*`, freed in `deinit`, initialised the way libssl's
/// `ssl_verify_cert_chain` initialises the handshake's own (the served chain,
/// leaf first, as the untrusted stack; purpose `ssl_server`; the `SSL_CTX`'s
/// verify parameters and security level), so what runs on it next sees what
/// a handshake sees.
final class X509StoreContext {
    /// The owned `X509_STORE_CTX*`; never null.
    let pointer: OpaquePointer
    /// Keeps the store, the leaf and the untrusted stack alive while the context points at them.
    private let store: TrustStore
    private let leaf: X509Certificate
    private let untrusted: CertificateStack

    /// Initialises a context validating `leaf` with `untrusted` (the served
    /// chain) against `store` at `time` (nil = now). With `tls`, its verify
    /// parameters and security level are applied as libssl applies them.
    init(store: TrustStore, leaf: X509Certificate, untrusted: [X509Certificate], at time: Date?,
         like tls: TLSClientContext? = nil, maxDepth: Int? = nil) throws {
        ERR_clear_error()
        guard let stack = CertificateStack(untrusted), let pointer = X509_STORE_CTX_new() else {
            throw OpenSSLError.drain("X509_STORE_CTX_new")
        }
        self.pointer = pointer
        self.store = store
        self.leaf = leaf
        self.untrusted = stack
        guard X509_STORE_CTX_init(pointer, store.pointer, leaf.pointer, stack.pointer) == 1,
              X509_STORE_CTX_set_default(pointer, "ssl_server") == 1 else {
            throw OpenSSLError.drain("X509_STORE_CTX_init")
        }
        let parameters = X509_STORE_CTX_get0_param(pointer)
        if let tls {
            // ssl_verify_cert_chain: the SSL's parameters, then its security level as the auth level.
            guard X509_VERIFY_PARAM_set1(parameters, SSL_CTX_get0_param(tls.pointer)) == 1 else {
                throw OpenSSLError.drain("X509_VERIFY_PARAM_set1")
            }
            X509_VERIFY_PARAM_set_auth_level(parameters, SSL_CTX_get_security_level(tls.pointer))
        }
        if let time {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970.rounded(.down)))
        }
        if let maxDepth {
            X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: maxDepth))
        }
    }

    deinit { X509_STORE_CTX_free(pointer) }
}

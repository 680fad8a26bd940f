import Foundation
internal import COpenSSL

/// One path validation outside a handshake: the single owner of an
/// `X509_STORE_CTX*`, freed in `deinit`, set up like the TLS client's own
/// (purpose `ssl_server`, `X509_V_FLAG_X509_STRICT`) so tests and limbo see
/// exactly what a handshake sees.
final class X509StoreContext {
    /// The owned `X509_STORE_CTX*`; never null.
    let pointer: OpaquePointer
    /// Keeps the store, the leaf and the untrusted stack alive while the context points at them.
    private let store: TrustStore
    private let leaf: X509Certificate
    private let untrusted: CertificateStack

    /// Initialises a context validating `leaf` with `untrusted` intermediates against `store` at `time` (nil = now).
    init(store: TrustStore, leaf: X509Certificate, untrusted: [X509Certificate], at time: Date?,
         maxDepth: Int? = nil) throws {
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
        X509StoreContext.applyStrictness(parameters)
        if let time {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970.rounded(.down)))
        }
        if let maxDepth {
            X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: maxDepth))
        }
    }

    deinit { X509_STORE_CTX_free(pointer) }

    /// Turns on the checks that make path validation stricter than OpenSSL's default.
    ///
    /// `X509_V_FLAG_X509_STRICT` enforces RFC 5280 §4.2 encoding rules (basic
    /// constraints critical on CAs, AKI/SKI presence, no empty SAN, …). Measured
    /// on x509-limbo's 198 SERVER cases: 144 agree with it, 137 without it
    /// (Tests/PinproxyRuntimeTests/Fixtures), and no case it fails is a real-world chain.
    static func applyStrictness(_ parameters: OpaquePointer?) {
        guard let parameters else { return }
        X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT))
    }
}

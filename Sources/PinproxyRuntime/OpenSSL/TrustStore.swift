internal import COpenSSL

/// A set of trust anchors: the single owner of an `X509_STORE*`, freed in `deinit`.
///
/// Either the system store (OpenSSL's default paths or the config's
/// `trust_store` file) or a policy's private `anchors`. After construction the
/// store is only read, which OpenSSL allows from many threads; an `SSL_CTX`
/// that uses it takes its own reference (`SSL_CTX_set1_cert_store`).
final class TrustStore: @unchecked Sendable {
    /// The owned `X509_STORE*`; never null.
    let pointer: OpaquePointer

    /// Adopts a freshly created store: this object releases it.
    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_STORE_free(pointer) }

    /// The system trust store: OpenSSL's default paths when `path` is nil, else that CA bundle file.
    static func system(path: String?) throws -> TrustStore {
        let store = try empty()
        ERR_clear_error()
        if let path {
            guard X509_STORE_load_file(store.pointer, path) == 1 else {
                throw OpenSSLError.drain("load trust store \(path)")
            }
        } else {
            guard X509_STORE_set_default_paths(store.pointer) == 1 else {
                throw OpenSSLError.drain("load OpenSSL's default trust paths")
            }
        }
        return store
    }

    /// A store trusting exactly `certificates` (the store takes its own references).
    static func anchors(_ certificates: [X509Certificate]) throws -> TrustStore {
        let store = try empty()
        for certificate in certificates {
            ERR_clear_error()
            guard X509_STORE_add_cert(store.pointer, certificate.pointer) == 1 else {
                throw OpenSSLError.drain("add anchor \(certificate.facts.subject)")
            }
        }
        return store
    }

    private static func empty() throws -> TrustStore {
        ERR_clear_error()
        guard let pointer = X509_STORE_new() else { throw OpenSSLError.drain("X509_STORE_new") }
        return TrustStore(takingOwnership: pointer)
    }
}

internal import COpenSSL

/// The public half of a key, as certificates being built take it: the single
/// owner of an `EVP_PKEY*` holding no private part, freed in `deinit`.
///
/// Why not the `PrivateKey` itself: OpenSSL 3's `X509_set_pubkey` with a
/// provider key encodes it with a new `OSSL_ENCODER` context and decodes the
/// result with a new `OSSL_DECODER` context, about 2.2 million instructions,
/// three quarters of minting a leaf (callgrind, `bench/leaf-mint-cost.sh`).
/// An EC_KEY-backed ("legacy") key is encoded directly by its method and
/// cached in the certificate as it is. So the key is decoded once, here,
/// from its SubjectPublicKeyInfo, into such a key, and shared (read-only,
/// reference-counted) by every certificate that binds it.
final class CertificatePublicKey: @unchecked Sendable {
    /// The owned `EVP_PKEY*` (EC, public only); never null.
    let pointer: OpaquePointer

    /// The public half of `key`, which must be an EC key.
    init(of key: PrivateKey) throws {
        let info = key.subjectPublicKeyInfo
        ERR_clear_error()
        let ecKey: OpaquePointer? = info.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return shim_d2i_EC_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let ecKey else { throw OpenSSLError.drain("decode EC public key") }
        guard let pointer = EVP_PKEY_new() else {
            shim_EC_KEY_free(ecKey)
            throw OpenSSLError.drain("EVP_PKEY_new")
        }
        // assign: the EVP_PKEY owns the EC_KEY from here on.
        guard shim_EVP_PKEY_assign_EC_KEY(pointer, ecKey) == 1 else {
            shim_EC_KEY_free(ecKey)
            EVP_PKEY_free(pointer)
            throw OpenSSLError.drain("wrap EC public key")
        }
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }
}

/// A private key that signs many certificates (a CA generation's issuing
/// key): ECDSA with SHA-256 set up once. OpenSSL 3 fetches the digest, the
/// signature algorithm and the key manager from the providers at every
/// `EVP_DigestSignInit` (what `X509_sign` does each time); copying an
/// initialised context is a few allocations.
final class CertificateSigningKey: @unchecked Sendable {
    let key: PrivateKey
    /// The initialised `EVP_MD_CTX*`, never used itself: only copied, under `lock`.
    private let template: OpaquePointer
    private let lock = Locked<Void>(())

    init(_ key: PrivateKey) throws {
        ERR_clear_error()
        guard let template = EVP_MD_CTX_new() else { throw OpenSSLError.drain("EVP_MD_CTX_new") }
        guard EVP_DigestSignInit(template, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            EVP_MD_CTX_free(template)
            throw OpenSSLError.drain("set up ECDSA-SHA256 signing")
        }
        self.key = key
        self.template = template
    }

    deinit { EVP_MD_CTX_free(template) }

    /// Signs `certificate` (an `X509*` being built) with a copy of the template.
    func sign(_ certificate: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard lock.withLock({ _ in EVP_MD_CTX_copy_ex(context, template) }) == 1 else { return false }
        return X509_sign_ctx(certificate, context) > 0
    }
}

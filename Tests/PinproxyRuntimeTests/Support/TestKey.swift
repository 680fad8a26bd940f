import COpenSSL
@testable import PinproxyRuntime

/// A key pair generated at test time (no committed keys): owns an `EVP_PKEY*`.
final class TestKey: @unchecked Sendable {
    /// The algorithms the test PKI covers.
    enum Kind: String, CaseIterable, Sendable {
        case ecP256 = "EC P-256", rsa2048 = "RSA-2048", ed25519 = "Ed25519"
        /// The other key types of Debian's roots, and forbidden ones for the web-PKI key rule.
        case ecP384 = "EC P-384", rsa4096 = "RSA-4096"
        case rsa1024 = "RSA-1024", rsa2052 = "RSA-2052", ecP192 = "EC P-192", dsa2048 = "DSA-2048"

        /// The kinds a TLS server certificate is made of in the handshake tests (quick to generate, all accepted).
        static let serverKinds: [Kind] = [.ecP256, .rsa2048, .ed25519]
    }

    let kind: Kind
    let pointer: OpaquePointer

    init(_ kind: Kind) throws {
        self.kind = kind
        let algorithm = switch kind {
        case .ecP256, .ecP384, .ecP192: "EC"
        case .rsa2048, .rsa4096, .rsa1024, .rsa2052: "RSA"
        case .ed25519: "ED25519"
        case .dsa2048: "DSA"
        }
        ERR_clear_error()
        if kind == .dsa2048 {
            pointer = try Self.dsaKey()
            return
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw OpenSSLError.drain("EVP_PKEY_CTX_new_from_name \(algorithm)")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError.drain("keygen init \(kind)") }
        switch kind {
        case .ecP256: _ = EVP_PKEY_CTX_set_group_name(context, "P-256")
        case .ecP384: _ = EVP_PKEY_CTX_set_group_name(context, "P-384")
        case .ecP192: _ = EVP_PKEY_CTX_set_group_name(context, "P-192")
        case .rsa2048: _ = EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048)
        case .rsa4096: _ = EVP_PKEY_CTX_set_rsa_keygen_bits(context, 4096)
        case .rsa1024: _ = EVP_PKEY_CTX_set_rsa_keygen_bits(context, 1024)
        case .rsa2052: _ = EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2052)
        case .ed25519, .dsa2048: break
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSLError.drain("keygen \(kind)") }
        pointer = key
    }

    deinit { EVP_PKEY_free(pointer) }

    /// DSA needs domain parameters first (2048-bit p, 256-bit q).
    private static func dsaKey() throws -> OpaquePointer {
        guard let parameterContext = EVP_PKEY_CTX_new_from_name(nil, "DSA", nil) else {
            throw OpenSSLError.drain("EVP_PKEY_CTX_new_from_name DSA")
        }
        defer { EVP_PKEY_CTX_free(parameterContext) }
        var parameters: OpaquePointer?
        guard EVP_PKEY_paramgen_init(parameterContext) == 1,
              EVP_PKEY_CTX_set_dsa_paramgen_bits(parameterContext, 2048) == 1,
              EVP_PKEY_CTX_set_dsa_paramgen_q_bits(parameterContext, 256) == 1,
              EVP_PKEY_paramgen(parameterContext, &parameters) == 1, let parameters else {
            throw OpenSSLError.drain("DSA parameters")
        }
        defer { EVP_PKEY_free(parameters) }
        guard let keyContext = EVP_PKEY_CTX_new_from_pkey(nil, parameters, nil) else { throw OpenSSLError.drain("DSA context") }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(keyContext) == 1, EVP_PKEY_generate(keyContext, &key) == 1, let key else {
            throw OpenSSLError.drain("DSA keygen")
        }
        return key
    }

    /// The digest to sign with: none for Ed25519 (the algorithm fixes it), SHA-256 otherwise.
    var signingDigest: OpaquePointer? { kind == .ed25519 ? nil : EVP_sha256() }

    /// The unencrypted PKCS#8 PEM encoding.
    var pem: String {
        TestPKI.pem { PEM_write_bio_PrivateKey($0, pointer, nil, nil, 0, nil, nil) }
    }
}

import COpenSSL
@testable import PinproxyRuntime

/// A key pair generated at test time (no committed keys): owns an `EVP_PKEY*`.
final class TestKey: @unchecked Sendable {
    /// The algorithms the test PKI covers.
    enum Kind: String, CaseIterable, Sendable {
        case ecP256 = "EC P-256", rsa2048 = "RSA-2048", ed25519 = "Ed25519"
    }

    let kind: Kind
    let pointer: OpaquePointer

    init(_ kind: Kind) throws {
        self.kind = kind
        let algorithm = switch kind { case .ecP256: "EC"; case .rsa2048: "RSA"; case .ed25519: "ED25519" }
        ERR_clear_error()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw OpenSSLError.drain("EVP_PKEY_CTX_new_from_name \(algorithm)")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError.drain("keygen init \(kind)") }
        switch kind {
        case .ecP256: _ = EVP_PKEY_CTX_set_group_name(context, "P-256")
        case .rsa2048: _ = EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048)
        case .ed25519: break
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw OpenSSLError.drain("keygen \(kind)") }
        pointer = key
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The digest to sign with: none for Ed25519 (the algorithm fixes it), SHA-256 otherwise.
    var signingDigest: OpaquePointer? { kind == .ed25519 ? nil : EVP_sha256() }

    /// The unencrypted PKCS#8 PEM encoding.
    var pem: String {
        TestPKI.pem { PEM_write_bio_PrivateKey($0, pointer, nil, nil, 0, nil, nil) }
    }
}

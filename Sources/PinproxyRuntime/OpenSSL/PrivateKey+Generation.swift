internal import COpenSSL

extension PrivateKey {
    /// A new ECDSA P-256 key from OpenSSL's default random generator.
    ///
    /// P-256 (not P-384, not Ed25519): every TLS client pinproxy serves
    /// verifies it (Java 8, Go, NSS, SChannel), its signature is the cheapest
    /// of the curves they all accept, and it is what the CA/Browser Forum and
    /// the benchmarks' anchors use.
    static func generateP256() throws -> PrivateKey {
        ERR_clear_error()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw OpenSSLError.drain("EVP_PKEY_CTX_new_from_name EC")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else {
            throw OpenSSLError.drain("generate an ECDSA P-256 key")
        }
        return PrivateKey(takingOwnership: key)
    }

    /// Whether this is an EC key on P-256 (`prime256v1`).
    var isP256: Bool {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            return false
        }
        return String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the
    /// form `PrivateKey.load` reads back. The bytes are secret: the caller
    /// writes them only to a file created with mode 0600.
    func pkcs8PEM() throws -> [UInt8] {
        ERR_clear_error()
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError.drain("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PKCS8PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw OpenSSLError.drain("encode private key as PKCS#8 PEM")
        }
        return Self.contents(of: bio)
    }

    /// The DER SubjectPublicKeyInfo of the public half.
    var subjectPublicKeyInfo: [UInt8] { X509Certificate.encode { i2d_PUBKEY(pointer, $0) } }

    /// What a memory BIO holds.
    static func contents(of bio: OpaquePointer) -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }
}

extension PrivateKey {
    /// The key identifier of the public half: SHA-1 of the subjectPublicKey
    /// BIT STRING (RFC 5280 §4.2.1.2, method 1; what OpenSSL's `hash` and Go write).
    func keyIdentifier() throws -> [UInt8] {
        ERR_clear_error()
        var publicKey: OpaquePointer?
        guard X509_PUBKEY_set(&publicKey, pointer) == 1, let publicKey else {
            throw OpenSSLError.drain("encode public key")
        }
        defer { X509_PUBKEY_free(publicKey) }
        var bits: UnsafePointer<UInt8>?
        var length: Int32 = 0
        guard X509_PUBKEY_get0_param(nil, &bits, &length, nil, publicKey) == 1, let bits else {
            throw OpenSSLError.drain("read public key bits")
        }
        var output = [UInt8](repeating: 0, count: 20)
        var outputLength: UInt32 = 0
        guard EVP_Digest(bits, Int(length), &output, &outputLength, EVP_sha1(), nil) == 1, outputLength == 20 else {
            throw OpenSSLError.drain("SHA-1 of public key")
        }
        return output
    }
}

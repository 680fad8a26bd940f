internal import COpenSSL

/// A private key (the client key of mutual TLS): the single owner of an `EVP_PKEY*`, freed in `deinit`.
final class PrivateKey: @unchecked Sendable {
    /// The owned `EVP_PKEY*`; never null.
    let pointer: OpaquePointer

    /// Adopts `pointer`: this object releases it.
    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Loads the first private key of a PEM file (PKCS#8, or a traditional RSA/EC key).
    /// Encrypted keys are refused: the daemon cannot ask for a passphrase.
    static func load(contentsOf path: String) throws -> PrivateKey {
        try parse(PEMFile(contentsOf: path))
    }

    /// Parses a key from in-memory PEM; `source` names it in errors.
    static func parse(_ bytes: [UInt8], source: String) throws -> PrivateKey {
        try parse(PEMFile(bytes: bytes, path: source))
    }

    private static func parse(_ file: PEMFile) throws -> PrivateKey {
        let path = file.path
        guard let block = file.blocks.first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
            throw FileLoadError(path: path, problem: "holds no PEM PRIVATE KEY block")
        }
        guard block.label != "ENCRYPTED PRIVATE KEY" else {
            throw FileLoadError(path: path, problem: "is encrypted; pinproxy needs an unencrypted key file")
        }
        // d2i_AutoPrivateKey recognises PKCS#8 and the traditional RSA/EC encodings.
        let key: OpaquePointer? = block.der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let key else {
            ERR_clear_error()
            throw FileLoadError(path: path, problem: "holds a \(block.label) block that is not a valid key")
        }
        return PrivateKey(takingOwnership: key)
    }

    /// True when `certificate` carries this key's public half.
    func matches(_ certificate: X509Certificate) -> Bool {
        let matches = X509_check_private_key(certificate.pointer, pointer) == 1
        ERR_clear_error()
        return matches
    }
}

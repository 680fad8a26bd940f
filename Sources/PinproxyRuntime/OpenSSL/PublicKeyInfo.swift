internal import COpenSSL

/// Checks on a DER SubjectPublicKeyInfo (a `PUBLIC KEY` PEM block) without keeping the key.
enum PublicKeyInfo {
    /// True when `der` parses as a public key; the parsed `EVP_PKEY` is freed at once.
    static func isValid(_ der: [UInt8]) -> Bool {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        ERR_clear_error()
        guard let key else { return false }
        EVP_PKEY_free(key)
        return true
    }
}

internal import COpenSSL

/// SHA-256 through the EVP interface (the low-level `SHA256_*` calls are deprecated in OpenSSL 3).
enum Digest {
    /// The 32-byte SHA-256 of `bytes`; empty only if OpenSSL itself fails, which a pin then never matches.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, EVP_sha256(), nil)
        }
        return status == 1 && length == 32 ? output : []
    }
}

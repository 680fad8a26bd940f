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

    /// SHA-256 over `parts`, each preceded by its length (8 bytes, little
    /// endian), so no two different lists of parts hash the same bytes.
    static func sha256(lengthPrefixed parts: [[UInt8]]) -> [UInt8] {
        var joined: [UInt8] = []
        joined.reserveCapacity(parts.reduce(0) { $0 + 8 + $1.count })
        for part in parts {
            let count = UInt64(part.count)
            joined += (0..<8).map { UInt8(truncatingIfNeeded: count >> (8 * $0)) }
            joined += part
        }
        return sha256(joined)
    }
}

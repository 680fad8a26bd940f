extension SPKIPin {
    /// Parses a pin as written in the configuration or on the command line.
    ///
    /// Accepted spellings (SPEC §2.1), all of one SHA-256 digest in strict
    /// standard base64 with padding:
    /// - `sha256/<base64>` (OkHttp, TrustKit; the canonical form),
    /// - `sha256//<base64>` (curl's `--pinnedpubkey`),
    /// - `pin-sha256="<base64>"` (HPKP, RFC 7469 §2.1.1).
    /// The digest must decode to exactly 32 bytes; the error quotes the input
    /// and says how many bytes it did decode to.
    public static func parse(_ text: String) throws(PinParseError) -> SPKIPin {
        // The canonical and curl spellings in ASCII (every valid one) are read
        // straight from the text's bytes: every pin of a configuration comes
        // here, and Character-wise prefix tests cost more than the decoding.
        if let canonical = text.utf8.withContiguousStorageIfAvailable({ digest(ofASCIISHA256: $0) }), let canonical {
            return try pin(canonical, text)
        }
        let encoded: Substring
        // A canonical pin whose base64 starts with '/' also begins "sha256//":
        // the 44 characters of a 32-byte digest after "sha256/" tell them apart.
        if text.hasPrefix("sha256//"), text.utf8.count != "sha256/".utf8.count + 44 {
            encoded = text.dropFirst("sha256//".count)
        } else if text.hasPrefix("sha256/") {
            encoded = text.dropFirst("sha256/".count)
        } else if text.hasPrefix("pin-sha256=\""), text.hasSuffix("\""), text.count >= "pin-sha256=\"\"".count {
            encoded = text.dropFirst("pin-sha256=\"".count).dropLast()
        } else {
            throw PinParseError(input: text, message:
                "pin \"\(text)\" must be written sha256/<base64 of the SHA-256 of the SubjectPublicKeyInfo>")
        }
        return try pin(.some(StrictBase64.decode(encoded)), text)
    }

    /// The decoded digest of an all-ASCII `sha256/…` or `sha256//…` pin (the
    /// inner nil: not base64); nil when `bytes` is not such a pin, for the
    /// Character-wise reading (where a combining mark after the '/' makes
    /// another character).
    private static func digest(ofASCIISHA256 bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]?? {
        let canonical = "sha256/".utf8, curl = "sha256//".utf8
        guard bytes.allSatisfy({ $0 < 0x80 }), bytes.starts(with: canonical) else { return nil }
        let isCurl = bytes.starts(with: curl) && bytes.count != canonical.count + 44
        let encoded = UnsafeBufferPointer(rebasing: bytes[(isCurl ? curl.count : canonical.count)...])
        return .some(StrictBase64.decode(encoded))
    }

    /// The pin of a decoded digest, or the error that quotes `text`.
    private static func pin(_ decoded: [UInt8]??, _ text: String) throws(PinParseError) -> SPKIPin {
        guard let decoded, let digest = decoded else {
            throw PinParseError(input: text, message:
                "pin \"\(text)\" is not valid base64 (standard alphabet, with '=' padding, no spaces)")
        }
        guard let pin = SPKIPin(digest: digest) else {
            throw PinParseError(input: text, message:
                "pin \"\(text)\" decodes to \(digest.count) bytes; a SHA-256 pin is exactly 32 bytes")
        }
        return pin
    }
}

/// Bytes as lowercase hexadecimal, two digits each: the violation log's
/// `cert_sha256`, fingerprints in an environment, flood keys, CA tags, and
/// `\xHH` escapes.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as `"0a1b…"`.
    public static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

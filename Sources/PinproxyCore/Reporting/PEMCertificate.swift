import Foundation

/// The PEM text of a DER certificate (RFC 7468 §2 and §5): base64 in lines of
/// 64 characters between `-----BEGIN CERTIFICATE-----` and
/// `-----END CERTIFICATE-----`, every line ending in `\n`.
public enum PEMCertificate {
    public static func encode(der: [UInt8]) -> String {
        let base64 = Array(Data(der).base64EncodedString().utf8)
        var text: [UInt8] = Array("-----BEGIN CERTIFICATE-----\n".utf8)
        text.reserveCapacity(base64.count + base64.count / 64 + 60)
        var start = 0
        while start < base64.count {
            let end = min(start + 64, base64.count)
            text.append(contentsOf: base64[start..<end])
            text.append(UInt8(ascii: "\n"))
            start = end
        }
        text.append(contentsOf: "-----END CERTIFICATE-----\n".utf8)
        return String(decoding: text, as: UTF8.self)
    }
}

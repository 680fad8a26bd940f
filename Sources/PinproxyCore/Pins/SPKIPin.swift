import Foundation

/// A SHA-256 digest of a DER SubjectPublicKeyInfo (or, for certificate pins,
/// of a whole DER certificate): exactly 32 bytes, by construction.
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    public let digest: [UInt8]

    /// nil unless `digest` is exactly 32 bytes.
    public init?(digest: [UInt8]) {
        guard digest.count == 32 else { return nil }
        self.digest = digest
    }

    /// The canonical spelling, `sha256/<base64>` (OkHttp, TrustKit).
    public var description: String { "sha256/" + Data(digest).base64EncodedString() }
}

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

    /// The digest's 32 bytes in one call: the synthesised hash fed them to the
    /// hasher one by one, and the pins of 100,000 rules are hashed when they
    /// are shared (`PinListInterner`, the runtime's material cache).
    public func hash(into hasher: inout Hasher) {
        digest.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// The canonical spelling, `sha256/<base64>` (OkHttp, TrustKit).
    public var description: String { "sha256/" + Data(digest).base64EncodedString() }
}

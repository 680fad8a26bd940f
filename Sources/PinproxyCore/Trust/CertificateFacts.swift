import Foundation

/// What pinproxy knows about one certificate of a peer's chain: facts read by
/// the runtime from OpenSSL, as plain values so that policy code never sees a
/// pointer.
public struct CertificateFacts: Sendable, Hashable {
    /// The DER encoding of the certificate.
    public var der: [UInt8]
    /// SHA-256 of the DER SubjectPublicKeyInfo.
    public var spkiSHA256: [UInt8]
    /// SHA-256 of `der`.
    public var certificateSHA256: [UInt8]
    /// RFC 2253-style distinguished names, e.g. `CN=api.example.com,O=Example`.
    public var subject: String
    public var issuer: String
    public var notBefore: Date
    public var notAfter: Date
    /// What the web-PKI profile checks read; nil when not gathered (then
    /// those checks have nothing to refuse, so the runtime always sets it).
    public var profile: CertificateProfile?

    public init(der: [UInt8], spkiSHA256: [UInt8], certificateSHA256: [UInt8],
                subject: String, issuer: String, notBefore: Date, notAfter: Date,
                profile: CertificateProfile? = nil) {
        self.der = der
        self.spkiSHA256 = spkiSHA256
        self.certificateSHA256 = certificateSHA256
        self.subject = subject
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.profile = profile
    }
}

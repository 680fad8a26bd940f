import Foundation
import PinproxyCore

/// A leaf certificate the local CA minted for one CONNECT host (SPEC §3.1).
final class InterceptionLeaf: Sendable {
    let host: HostName
    let certificate: X509Certificate
    let notBefore: Date
    let notAfter: Date
    let serialNumber: [UInt8]

    init(host: HostName, certificate: X509Certificate, notBefore: Date, notAfter: Date, serialNumber: [UInt8]) {
        self.host = host
        self.certificate = certificate
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.serialNumber = serialNumber
    }
}

/// Mints leaves under one CA generation's issuing certificate: ECDSA P-256
/// with the generation's one leaf key, so minting is one ECDSA signature and
/// no key generation (it runs on an event loop). Everything but the serial,
/// the names, the validity and the signature is encoded once, here.
///
/// A leaf: subject CN=host (empty when the host is longer than CN's 64
/// characters), exactly one SAN `DNS:host`, basicConstraints CA:FALSE,
/// keyUsage digitalSignature (critical; ECDHE needs nothing else), EKU
/// serverAuth, SKI/AKI, a random 128-bit serial, valid from an hour before
/// now for 7 days (never past the issuing certificate).
struct LeafIssuer: Sendable {
    /// 7 days (SPEC §3.1): short enough that a copied leaf soon stops working,
    /// long enough that a client never sees one expire in a long session.
    static let lifetime: TimeInterval = 7 * 86_400
    static let backdating: TimeInterval = 3_600
    /// A cached leaf with less than this left is replaced.
    static let renewal: TimeInterval = 86_400
    /// RFC 5280 Appendix A: ub-common-name 64.
    static let commonNameLimit = 64

    let issuing: X509Certificate
    let issuingKey: PrivateKey
    let leafKey: PrivateKey
    /// The issuing certificate's notAfter: no leaf outlives it.
    let latestNotAfter: Date
    private let constantExtensions: [EncodedExtension]
    /// Set up once (see `CertificateSigningKey`, `CertificatePublicKey`): per leaf, only the signature.
    private let signer: CertificateSigningKey
    private let leafPublicKey: CertificatePublicKey

    init(issuing: X509Certificate, issuingKey: PrivateKey, leafKey: PrivateKey) throws {
        self.issuing = issuing
        self.issuingKey = issuingKey
        self.leafKey = leafKey
        signer = try CertificateSigningKey(issuingKey)
        leafPublicKey = try CertificatePublicKey(of: leafKey)
        latestNotAfter = issuing.facts.notAfter
        constantExtensions = [
            try EncodedExtension(.basicConstraints(isCA: false, pathLength: nil)),
            try EncodedExtension(.keyUsage([.digitalSignature])),
            try EncodedExtension(.serverAuthOnly),
            try EncodedExtension(.subjectKeyIdentifier(try leafKey.keyIdentifier())),
            try EncodedExtension(.authorityKeyIdentifier(issuing.subjectKeyIdentifier)),
        ]
    }

    /// A new leaf for `host` valid from `now` − 1 h. The caller checked that
    /// the CA's scope covers `host` and that it is not an IP literal.
    func mint(for host: HostName, at now: Date) throws -> InterceptionLeaf {
        let notBefore = now.addingTimeInterval(-Self.backdating)
        let notAfter = min(notBefore.addingTimeInterval(Self.lifetime), latestNotAfter)
        let fitsCommonName = host.value.utf8.count <= Self.commonNameLimit
        let serial = InterceptionCAIssuer.randomSerial()
        // RFC 5280 §4.2.1.6: with an empty subject the SAN must be critical.
        let alternativeName = try EncodedExtension(.subjectAlternativeName(dnsName: host.value, isCritical: !fitsCommonName))
        let certificate = try X509Certificate.sign(CertificateRequest(
            serialNumber: serial, commonName: fitsCommonName ? host.value : nil, organization: nil,
            notBefore: notBefore, notAfter: notAfter, subjectKey: leafPublicKey,
            extensions: constantExtensions + [alternativeName]),
            issuer: issuing, key: signer)
        return InterceptionLeaf(host: host, certificate: certificate, notBefore: notBefore.rounded, notAfter: notAfter.rounded,
                                serialNumber: serial)
    }

    /// Whether `leaf` may still be served at `now`: inside its validity, and
    /// with a day left unless no new leaf could last longer (the CA ends first).
    func isFresh(_ leaf: InterceptionLeaf, at now: Date) -> Bool {
        guard now >= leaf.notBefore, now < leaf.notAfter else { return false }
        return leaf.notAfter.timeIntervalSince(now) >= Self.renewal || leaf.notAfter >= latestNotAfter.rounded
    }
}

private extension Date {
    /// Whole seconds, as a certificate holds them.
    var rounded: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}

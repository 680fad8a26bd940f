import Foundation
import PinproxyCore

/// Everything file-backed a TrustPolicy needs, loaded once per configuration build.
///
/// Loading is where file problems surface (at `check`, start and reload, never
/// during a handshake); each error names the file and what is wrong with it.
/// Immutable afterwards, so one instance is shared by every connection of a
/// configuration generation.
final class PolicyMaterial: @unchecked Sendable {
    /// SHA-256 digests of pinned SubjectPublicKeyInfos: the inline `pins` followed by those of `public_keys` files.
    let pinnedSPKIDigests: [[UInt8]]
    /// Certificates pinned byte for byte (`certificates`); also candidates for the signing path.
    let pinnedCertificates: [X509Certificate]
    /// The policy's private anchors (`anchors`), nil when it has none.
    let anchorStore: TrustStore?
    /// The client certificate chain (leaf first) and its key, set only with `client_certificate`.
    let clientCertificateChain: [X509Certificate]
    let clientKey: PrivateKey?
    /// The CRLs of `crl_files`, nil when there are none (then no CRL checking).
    let revocationLists: RevocationListStack?
    /// SHA-256 over everything above as loaded (the pins' digests, then the
    /// DER of the pinned certificates, the anchors, the client chain and the
    /// CRLs, each length-prefixed): two materials with equal digests verify
    /// alike, whatever their files are called. The key is left out: it must
    /// match the chain's leaf, which is in.
    let contentDigest: [UInt8]

    private init(pinnedSPKIDigests: [[UInt8]], pinnedCertificates: [X509Certificate], anchors: [X509Certificate],
                 anchorStore: TrustStore?, clientCertificateChain: [X509Certificate], clientKey: PrivateKey?,
                 revocationLists: [RevocationList]) {
        var parts: [[UInt8]] = pinnedSPKIDigests + [[0x01]] + pinnedCertificates.map(\.der) + [[0x02]] + anchors.map(\.der)
        parts += [[0x03]] + clientCertificateChain.map(\.der) + [[0x04]] + revocationLists.map(\.der)
        contentDigest = Digest.sha256(lengthPrefixed: parts)
        self.pinnedSPKIDigests = pinnedSPKIDigests
        self.pinnedCertificates = pinnedCertificates
        self.anchorStore = anchorStore
        self.clientCertificateChain = clientCertificateChain
        self.clientKey = clientKey
        self.revocationLists = RevocationListStack(revocationLists)
    }

    /// Reads and checks every file `policy` names.
    static func load(for policy: TrustPolicy) throws -> PolicyMaterial {
        var digests = policy.pins.map(\.digest)
        for path in policy.publicKeyFiles {
            digests += try spkiDigests(contentsOf: path)
        }
        let pinned = try policy.certificateFiles.flatMap { try X509Certificate.load(contentsOf: $0) }
        let anchors = try policy.anchorFiles.flatMap { try X509Certificate.load(contentsOf: $0) }
        let anchorStore = anchors.isEmpty ? nil : try TrustStore.anchors(anchors)
        var chain: [X509Certificate] = []
        var key: PrivateKey?
        if let credentials = policy.clientCredentials {
            chain = try X509Certificate.load(contentsOf: credentials.certificatePath)
            let loaded = try PrivateKey.load(contentsOf: credentials.keyPath)
            guard loaded.matches(chain[0]) else {
                throw FileLoadError(path: credentials.keyPath,
                                    problem: "does not match the certificate in \(credentials.certificatePath)")
            }
            key = loaded
        }
        let crls = try policy.crlFiles.flatMap { try RevocationList.load(contentsOf: $0) }
        return PolicyMaterial(pinnedSPKIDigests: digests, pinnedCertificates: pinned, anchors: anchors,
                              anchorStore: anchorStore, clientCertificateChain: chain, clientKey: key,
                              revocationLists: crls)
    }

    /// SPEC §2.1: a CRL past its `nextUpdate` is a warning in `check` and at
    /// reload, not a silent pass (path validation refuses what it covers).
    func staleRevocationLists(at now: Date) -> [String] {
        (revocationLists?.lists ?? []).compactMap { list in
            guard let next = list.nextUpdate, next < now else { return nil }
            return "the CRL of \(list.issuer) is past its nextUpdate (\(RFC3339Timestamp.seconds(next))): "
                + "certificates it covers are refused until it is refreshed"
        }
    }

    /// SPKI digests of a `public_keys` file: each `PUBLIC KEY` block (already a DER
    /// SubjectPublicKeyInfo) or `CERTIFICATE` block (its SPKI), or a DER certificate.
    private static func spkiDigests(contentsOf path: String) throws -> [[UInt8]] {
        let file = try PEMFile(contentsOf: path)
        if file.der != nil {
            return try X509Certificate.load(contentsOf: path).map { Digest.sha256($0.subjectPublicKeyInfo) }
        }
        var digests: [[UInt8]] = []
        for (index, block) in file.blocks.enumerated() {
            switch block.label {
            case "PUBLIC KEY":
                guard PublicKeyInfo.isValid(block.der) else {
                    throw FileLoadError(path: path, problem: "PEM block \(index + 1) is not a valid public key")
                }
                digests.append(Digest.sha256(block.der))
            case "CERTIFICATE":
                guard let certificate = X509Certificate(der: block.der) else {
                    throw FileLoadError(path: path, problem: "PEM block \(index + 1) is not a valid certificate")
                }
                digests.append(Digest.sha256(certificate.subjectPublicKeyInfo))
            default:
                throw FileLoadError(path: path, problem: "PEM block \(index + 1) is a \(block.label); "
                                    + "public_keys takes PUBLIC KEY (SubjectPublicKeyInfo) or CERTIFICATE blocks")
            }
        }
        return digests
    }
}

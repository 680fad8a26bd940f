import Foundation
import PinproxyCore

/// Creates one generation of the local CA (`pinproxy ca init`, SPEC §3.1):
/// a root certificate, an issuing certificate it signs (path length 0), the
/// issuing key and the one leaf key, all ECDSA P-256.
///
/// Both certificates carry the same critical nameConstraints (RFC 5280
/// §4.2.1.10): the scope's names as permitted dNSName subtrees, and every
/// IPv4 and IPv6 address excluded (`0.0.0.0/0`, `::/0`). A dNSName
/// constraint restricts only dNSNames, so without the exclusion a leaf with
/// an IP SAN would be unconstrained. The root carries them for the clients
/// that apply a trust anchor's constraints (OpenSSL, Go, NSS); the issuing
/// certificate carries them for Java, which ignores them on a trust anchor
/// and applies them on intermediates (PKIX `TrustAnchor` semantics).
///
/// The root key is discarded once the issuing certificate is signed: it is
/// never written. Kept, it would be the one key able to sign a new
/// intermediate without constraints, which Java (ignoring the root's) would
/// accept for any name; and it would never be used again, because a new
/// scope needs new constraints on the root itself, that is, a new root.
/// Re-issuing is `ca init` making a new generation, and clients trusting it.
enum InterceptionCAIssuer {
    /// Root and issuing certificate lifetime: three years. The root cannot be
    /// renewed (its key is gone), so every expiry means re-installing a root
    /// in every client: a short life costs operators that often. A long one
    /// keeps a stolen issuing key useful longer, though only for the CA's own
    /// names. Three years, with `check` warning in the last 30 days.
    static let lifetime: TimeInterval = 3 * 365 * 86_400
    /// Backdating for clocks behind ours (certificates are used at once).
    static let backdating: TimeInterval = 3_600
    static let organization = "pinproxy"

    /// RFC 5280 §4.2.1.10 iPAddress constraints: address then mask, all zero = every address.
    static let everyIPv4: [UInt8] = Array(repeating: 0, count: 8)
    static let everyIPv6: [UInt8] = Array(repeating: 0, count: 32)

    /// A new generation's material, not yet written.
    struct Generation {
        let root: X509Certificate
        let issuing: X509Certificate
        let issuingKey: PrivateKey
        let leafKey: PrivateKey
    }

    static func issue(for scope: InterceptionScope, at now: Date) throws -> Generation {
        guard !scope.names.isEmpty else {
            // No permitted subtree would permit every name.
            throw RuntimeError.message("no hosts rule is intercepted: a CA without names would be a CA for every name")
        }
        let constraints = try EncodedExtension(.nameConstraints(permittedDNS: scope.names,
                                                                excludedIPRanges: [everyIPv4, everyIPv6]))
        let caUsage = try EncodedExtension(.keyUsage([.keyCertSign, .cRLSign]))
        let notBefore = now.addingTimeInterval(-backdating)
        let notAfter = now.addingTimeInterval(lifetime)
        // One tag per generation in both subjects: two installed generations never share a name.
        let tag = Hex.lowercase(randomSerial().prefix(4))

        let rootKey = try PrivateKey.generateP256()
        let rootSigner = try CertificateSigningKey(rootKey)
        let rootIdentifier = try rootKey.keyIdentifier()
        let root = try X509Certificate.sign(CertificateRequest(
            serialNumber: randomSerial(), commonName: "pinproxy interception root \(tag)", organization: organization,
            notBefore: notBefore, notAfter: notAfter, subjectKey: try CertificatePublicKey(of: rootKey),
            extensions: [try EncodedExtension(.basicConstraints(isCA: true, pathLength: 1)), caUsage,
                         try EncodedExtension(.subjectKeyIdentifier(rootIdentifier)),
                         try EncodedExtension(.authorityKeyIdentifier(rootIdentifier)), constraints]),
            issuer: nil, key: rootSigner)

        let issuingKey = try PrivateKey.generateP256()
        let issuing = try X509Certificate.sign(CertificateRequest(
            serialNumber: randomSerial(), commonName: "pinproxy interception issuing \(tag)", organization: organization,
            notBefore: notBefore, notAfter: notAfter, subjectKey: try CertificatePublicKey(of: issuingKey),
            extensions: [try EncodedExtension(.basicConstraints(isCA: true, pathLength: 0)), caUsage,
                         try EncodedExtension(.subjectKeyIdentifier(try issuingKey.keyIdentifier())),
                         try EncodedExtension(.authorityKeyIdentifier(rootIdentifier)), constraints]),
            issuer: root, key: rootSigner)
        // rootKey (and its signer) is released here and never written (see above).
        return Generation(root: root, issuing: issuing, issuingKey: issuingKey, leafKey: try PrivateKey.generateP256())
    }

    /// Writes `generation` into `directory`: keys first, the root last (its
    /// presence marks a CA), each atomically; files and directory handed to
    /// `directory.handoverOwner` when there is one.
    static func write(_ generation: Generation, to directory: CADirectory) throws(InterceptionCAError) {
        let owner = directory.handoverOwner
        try directory.prepare(owner: owner)
        let contents: [(String, mode_t, () throws -> [UInt8])] = [
            (CADirectory.leafKey, 0o600, { try generation.leafKey.pkcs8PEM() }),
            (CADirectory.issuingKey, 0o600, { try generation.issuingKey.pkcs8PEM() }),
            (CADirectory.issuingCertificate, 0o644, { generation.issuing.pem }),
            (CADirectory.rootCertificate, 0o644, { generation.root.pem }),
        ]
        var staged: [CADirectory.StagedFile] = []
        for (name, mode, encode) in contents {
            let bytes: [UInt8]
            do {
                bytes = try encode()
            } catch {
                directory.discard(staged)
                throw .io(directory.file(name), "cannot be encoded: \(error)")
            }
            do {
                staged.append(try directory.stage(bytes, as: name, mode: mode, owner: owner))
            } catch {
                directory.discard(staged)
                throw error
            }
        }
        try directory.commit(staged)
    }

    /// 128 random bits, the serial of every certificate pinproxy issues (RFC
    /// 5280 §4.1.2.2: positive, at most 20 octets; CA/B Forum: ≥ 64 random bits).
    static func randomSerial() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return [generator.next(), generator.next()].flatMap { (word: UInt64) in
            (0..<8).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) }
        }
    }
}

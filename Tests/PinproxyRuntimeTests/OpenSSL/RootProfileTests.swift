import Foundation
import Testing
import COpenSSL
import PinproxyCore
@testable import PinproxyRuntime

/// One root of Debian's `ca-certificates` bundle, as a profile to copy.
struct DebianRoot: CustomTestStringConvertible, @unchecked Sendable {
    let index: Int
    let certificate: X509Certificate
    var testDescription: String { "\(index + 1). \(certificate.facts.subject)" }

    static let bundlePath = "/etc/ssl/certs/ca-certificates.crt"

    static let all: [DebianRoot] = {
        guard let roots = try? X509Certificate.load(contentsOf: bundlePath) else { return [] }
        return roots.enumerated().map { DebianRoot(index: $0.offset, certificate: $0.element) }
    }()
}

/// SPEC §2.3: path validation "must never reject a chain to a root of
/// Debian's ca-certificates bundle for a reason the browsers accept".
///
/// No network: for every root of the bundle, a test CA is made with that
/// root's exact extension profile (the root itself with a fresh key of the
/// same type, re-signed with its own digest, every extension and its
/// criticality untouched; only the validity is moved around now). Under it,
/// an intermediate and a leaf are issued the way public CAs issue them (CA/B
/// Forum BR §7.1.2 profiles), and the chain is evaluated exactly as a
/// handshake would (`OfflineHandshake`, an `anchors` policy on the copy).
@Suite("Debian root profiles")
struct RootProfileTests {
    @Test("the bundle is there and holds the roots the profiles are copied from")
    func bundleIsRead() {
        #expect(DebianRoot.all.count > 100)
    }

    @Test("a BR-profile chain under a copy of each Debian root is accepted", arguments: DebianRoot.all)
    func rootProfileIsAccepted(_ root: DebianRoot) throws {
        let directory = try TemporaryDirectory()
        let chain = try RootProfileChain(copying: root.certificate)
        let anchor = try directory.write(TestPKI.pem(chain.root), to: "root.pem")
        let prepared = try PreparedPolicy(ruleName: "profile", policy: TrustPolicy(kind: .anchors, anchorFiles: [anchor]),
                                          trustStore: try TrustStore.anchors([]), publicSuffixes: try LimboCase.publicSuffixes())
        let verdict = try OfflineHandshake.evaluate(chain.served, host: HostName(RootProfileChain.host)!,
                                                    port: 443, policy: prepared, at: nil)
        #expect(verdict.decision == .allow, "\(root.testDescription): \(verdict.decision.detail ?? "")")
    }
}

/// A root copied from a real one, with an intermediate and a leaf below it.
struct RootProfileChain {
    static let host = "www.profile-test.example.com"
    /// certificatePolicies with the CA/B Forum's domain-validated OID 2.23.140.1.2.1, as DER
    /// (OpenSSL's text form of this extension needs a config database).
    static let domainValidatedPolicy = "DER:30:0A:30:08:06:06:67:81:0C:01:02:01"

    let root: X509Certificate
    /// nil under a root whose pathLenConstraint is 0: the leaf is issued by the root itself.
    let intermediate: X509Certificate?
    let leaf: X509Certificate
    /// What a server sends: the leaf and the intermediate.
    var served: [X509Certificate] { [leaf] + (intermediate.map { [$0] } ?? []) }

    init(copying original: X509Certificate) throws {
        let rootKey = try Self.key(like: original)
        guard let copy = X509_dup(original.pointer) else { throw OpenSSLError.drain("X509_dup") }
        root = X509Certificate(takingOwnership: copy)
        X509_set_pubkey(copy, rootKey.pointer)
        Self.setValidity(copy, from: -30 * 86_400, to: 3650 * 86_400)
        // The root signs itself with the digest its real self-signature uses (SHA-1 for the oldest).
        guard X509_sign(copy, rootKey.pointer, Self.digest(of: original, key: rootKey)) > 0 else {
            throw OpenSSLError.drain("re-sign copy of \(original.facts.subject)")
        }
        let isEC = rootKey.kind == .ecP256 || rootKey.kind == .ecP384
        let digest = rootKey.kind == .ecP384 ? EVP_sha384() : EVP_sha256()
        guard X509_get_pathlen(copy) != 0 else {
            intermediate = nil
            leaf = try Self.leaf(isEC: isEC, by: root, signer: rootKey, digest: digest)
            return
        }
        let issuingKey = try Self.keys.key(isEC ? .ecP256 : .rsa2048)
        // BR §7.1.2.2 (subordinate CA): critical basicConstraints with pathLen, critical keyUsage, EKU serverAuth+clientAuth.
        let ica = try Self.issue(subject: "Profile Test TLS CA", key: issuingKey, by: root, signer: rootKey,
                                 digest: digest, extensions: [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
            (NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign"),
            (NID_ext_key_usage, "serverAuth,clientAuth"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, Self.authorityKeyIdentifier(of: root)),
            (NID_certificate_policies, Self.domainValidatedPolicy),
            (NID_crl_distribution_points, "URI:http://crl.profile-test.example.com/root.crl"),
            (NID_info_access, "caIssuers;URI:http://ca.profile-test.example.com/root.der"),
        ])
        intermediate = ica
        leaf = try Self.leaf(isEC: isEC, by: ica, signer: issuingKey, digest: EVP_sha256())
    }

    /// BR §7.1.2.7 (subscriber): cA false, digitalSignature, serverAuth only, the DNS name in the SAN.
    private static func leaf(isEC: Bool, by issuer: X509Certificate, signer: TestKey,
                             digest: OpaquePointer?) throws -> X509Certificate {
        let leafKey = try keys.key(isEC ? .ecP256 : .rsa2048)
        return try issue(subject: host, key: leafKey, by: issuer, signer: signer, digest: digest, extensions: [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, isEC ? "critical,digitalSignature" : "critical,digitalSignature,keyEncipherment"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_alt_name, "DNS:\(host)"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, authorityKeyIdentifier(of: issuer)),
            (NID_certificate_policies, domainValidatedPolicy),
            (NID_info_access, "OCSP;URI:http://ocsp.profile-test.example.com,caIssuers;URI:http://ca.profile-test.example.com/ica.der"),
        ])
    }

    /// The AKI a CA writes: its SKI, or for a CA without one (two Debian roots)
    /// the SHA-1 of its public key, RFC 5280 §4.2.1.2 method (1), as such CAs do.
    private static func authorityKeyIdentifier(of issuer: X509Certificate) -> String {
        if X509_get0_subject_key_id(issuer.pointer) != nil { return "keyid:always" }
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = X509_pubkey_digest(issuer.pointer, EVP_sha1(), &digest, &length)
        // AuthorityKeyIdentifier ::= SEQUENCE { [0] keyIdentifier (20 bytes) }
        return "DER:" + ([0x30, 0x16, 0x80, 0x14] + digest).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// One key per type and size the bundle uses, generated once (RSA-4096 takes a second).
    private static let keys = KeyCache()

    private static func key(like certificate: X509Certificate) throws -> TestKey {
        switch certificate.profile.publicKey {
        case .rsa(let bits) where bits <= 2048: try keys.key(.rsa2048)
        case .rsa: try keys.key(.rsa4096)
        case .ellipticCurve("P-256"): try keys.key(.ecP256)
        case .ellipticCurve("P-384"): try keys.key(.ecP384)
        case let other: throw RuntimeError.message("no test key like \(other) of \(certificate.facts.subject)")
        }
    }

    private static func digest(of certificate: X509Certificate, key: TestKey) -> OpaquePointer? {
        var digestNID: Int32 = 0, keyNID: Int32 = 0
        guard OBJ_find_sigid_algs(X509_get_signature_nid(certificate.pointer), &digestNID, &keyNID) == 1 else {
            return EVP_sha256()
        }
        return EVP_get_digestbyname(OBJ_nid2sn(digestNID)) ?? EVP_sha256()
    }

    private static func setValidity(_ x509: OpaquePointer, from notBefore: Int, to notAfter: Int) {
        X509_gmtime_adj(X509_getm_notBefore(x509), notBefore)
        X509_gmtime_adj(X509_getm_notAfter(x509), notAfter)
    }

    private static func issue(subject: String, key: TestKey, by issuer: X509Certificate, signer: TestKey,
                              digest: OpaquePointer?, extensions: [(Int32, String)]) throws -> X509Certificate {
        guard let x509 = X509_new() else { throw OpenSSLError.drain("X509_new") }
        let certificate = X509Certificate(takingOwnership: x509)
        X509_set_version(x509, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(x509), Int.random(in: 1...Int(Int32.max)))
        setValidity(x509, from: -86_400, to: 90 * 86_400)
        X509_set_pubkey(x509, key.pointer)
        X509_NAME_add_entry_by_txt(X509_get_subject_name(x509), "CN", MBSTRING_ASC, subject, -1, -1, 0)
        X509_set_issuer_name(x509, X509_get_subject_name(issuer.pointer))
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer.pointer, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLError.drain("extension \(nid)=\(value)")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        guard X509_sign(x509, signer.pointer, digest) > 0 else { throw OpenSSLError.drain("X509_sign \(subject)") }
        return certificate
    }
}

/// Keys made on first use and shared by every case (tests run in parallel).
final class KeyCache: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [TestKey.Kind: TestKey] = [:]

    func key(_ kind: TestKey.Kind) throws -> TestKey {
        lock.lock()
        defer { lock.unlock() }
        if let known = keys[kind] { return known }
        let made = try TestKey(kind)
        keys[kind] = made
        return made
    }
}

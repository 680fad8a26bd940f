import Foundation
import COpenSSL
@testable import PinproxyRuntime

/// A certificate with its private key, as issued by `TestPKI`.
struct TestIdentity: @unchecked Sendable {
    let certificate: X509Certificate
    let key: TestKey
}

/// A PKI generated at test time with the OpenSSL API (no committed keys that expire):
/// root CA → intermediate → leaf, and the odd certificates the tests need.
enum TestPKI {
    /// What a leaf should look like; defaults give a valid server certificate.
    struct Validity: Sendable {
        /// Seconds relative to now.
        var notBefore: Int = -3600
        var notAfter: Int = 30 * 86_400
        static let current = Validity()
        static let expired = Validity(notBefore: -10 * 86_400, notAfter: -86_400)
        static let notYetValid = Validity(notBefore: 86_400, notAfter: 10 * 86_400)
    }

    /// A standard chain of one key type.
    struct Chain: @unchecked Sendable {
        let root: TestIdentity
        let intermediate: TestIdentity
        let leaf: TestIdentity
        /// What a server sends: leaf and intermediate (never the root).
        var served: [X509Certificate] { [leaf.certificate, intermediate.certificate] }
    }

    static let defaultNames = ["DNS:api.example.com", "DNS:*.cdn.example.com", "IP:127.0.0.1", "IP:::1"]

    /// root → intermediate → leaf, all of `kind`, leaf with `names` and `validity`.
    static func chain(_ kind: TestKey.Kind = .ecP256, names: [String] = defaultNames,
                      validity: Validity = .current, rootName: String = "Test Root CA") throws -> Chain {
        let root = try selfSigned(name: rootName, kind: kind, isCA: true)
        let intermediate = try issue(name: "Test Intermediate CA", kind: kind, isCA: true, by: root)
        let leaf = try issue(name: "api.example.com", kind: kind, isCA: false, names: names,
                             validity: validity, by: intermediate)
        return Chain(root: root, intermediate: intermediate, leaf: leaf)
    }

    /// A self-signed certificate (a root CA, or a self-signed leaf when `isCA` is false).
    static func selfSigned(name: String, kind: TestKey.Kind = .ecP256, isCA: Bool, names: [String] = [],
                           validity: Validity = Validity(notBefore: -30 * 86_400, notAfter: 3650 * 86_400)) throws -> TestIdentity {
        let key = try TestKey(kind)
        return try make(name: name, key: key, isCA: isCA, names: names, validity: validity, issuer: nil)
    }

    /// A certificate for a fresh key, signed by `issuer` (which need not be a CA: that is a test case).
    static func issue(name: String, kind: TestKey.Kind = .ecP256, isCA: Bool, names: [String] = [],
                      validity: Validity = Validity(notBefore: -30 * 86_400, notAfter: 365 * 86_400),
                      extensions extra: [(Int32, String)] = [], by issuer: TestIdentity) throws -> TestIdentity {
        try make(name: name, key: TestKey(kind), isCA: isCA, names: names, validity: validity, issuer: issuer,
                 extra: extra)
    }

    /// As `issue`, with a key the caller made (keys of some types are slow to make).
    static func issue(name: String, key: TestKey, isCA: Bool, names: [String] = [],
                      validity: Validity = Validity(notBefore: -30 * 86_400, notAfter: 365 * 86_400),
                      extensions extra: [(Int32, String)] = [], by issuer: TestIdentity) throws -> TestIdentity {
        try make(name: name, key: key, isCA: isCA, names: names, validity: validity, issuer: issuer, extra: extra)
    }

    /// A self-signed CA with a key the caller made; `extensions` replace or add to the defaults.
    static func selfSigned(name: String, key: TestKey, extensions extra: [(Int32, String)] = []) throws -> TestIdentity {
        try make(name: name, key: key, isCA: true, names: [],
                 validity: Validity(notBefore: -30 * 86_400, notAfter: 3650 * 86_400), issuer: nil, extra: extra)
    }

    private static func make(name: String, key: TestKey, isCA: Bool, names: [String], validity: Validity,
                             issuer: TestIdentity?, extra: [(Int32, String)] = []) throws -> TestIdentity {
        guard let x509 = X509_new() else { throw OpenSSLError.drain("X509_new") }
        let certificate = X509Certificate(takingOwnership: x509)
        X509_set_version(x509, 2)
        // Random serials: tests run in parallel and issuer+serial must not repeat.
        ASN1_INTEGER_set(X509_get_serialNumber(x509), Int.random(in: 1...Int(Int32.max)))
        X509_gmtime_adj(X509_getm_notBefore(x509), validity.notBefore)
        X509_gmtime_adj(X509_getm_notAfter(x509), validity.notAfter)
        X509_set_pubkey(x509, key.pointer)
        let subject = X509_get_subject_name(x509)
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, name, -1, -1, 0)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? subject)
        var extensions = [
            (NID_basic_constraints, isCA ? "critical,CA:TRUE" : "critical,CA:FALSE"),
            (NID_key_usage, isCA ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
        ]
        if !isCA { extensions.append((NID_ext_key_usage, "serverAuth,clientAuth")) }
        if !names.isEmpty { extensions.append((NID_subject_alt_name, names.joined(separator: ","))) }
        // An extra extension replaces the default one of the same kind; an empty value removes it.
        extensions = extensions.filter { nid, _ in !extra.contains { $0.0 == nid } } + extra.filter { !$0.1.isEmpty }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.pointer ?? x509, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLError.drain("extension \(nid)=\(value)")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        let signer = issuer?.key ?? key
        guard X509_sign(x509, signer.pointer, signer.signingDigest) > 0 else { throw OpenSSLError.drain("X509_sign") }
        return TestIdentity(certificate: certificate, key: key)
    }

    /// PEM text of a certificate.
    static func pem(_ certificate: X509Certificate) -> String {
        pem { PEM_write_bio_X509($0, certificate.pointer) }
    }

    /// Runs a `PEM_write_bio_*` call into a memory BIO and returns the text.
    static func pem(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}

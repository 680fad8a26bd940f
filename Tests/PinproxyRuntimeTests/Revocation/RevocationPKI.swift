import Foundation
import COpenSSL
@testable import PinproxyRuntime

/// A test PKI with revocation material, made at test time: root →
/// intermediate → leaf for api.example.com (optionally must-staple), CRLs
/// signed by the intermediate (OpenSSL API) and OCSP responses from
/// `openssl ocsp` acting as the intermediate's responder.
struct RevocationPKI {
    let directory: String
    let chain: TestPKI.Chain
    let servedChainFile: String
    let keyFile: String
    let rootFile: String
    let intermediateFile: String
    let intermediateKeyFile: String
    let leafFile: String

    init(directory: String, mustStaple: Bool = false) throws {
        self.directory = directory
        let root = try TestPKI.selfSigned(name: "Revocation Root CA", isCA: true)
        let intermediate = try TestPKI.issue(name: "Revocation Intermediate CA", isCA: true, by: root)
        let leaf = try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"],
                                     extensions: mustStaple ? [(NID_tlsfeature, "status_request")] : [],
                                     by: intermediate)
        chain = TestPKI.Chain(root: root, intermediate: intermediate, leaf: leaf)
        servedChainFile = directory + "/served.pem"
        keyFile = directory + "/leaf-key.pem"
        rootFile = directory + "/root.pem"
        intermediateFile = directory + "/intermediate.pem"
        intermediateKeyFile = directory + "/intermediate-key.pem"
        leafFile = directory + "/leaf.pem"
        try (TestPKI.pem(leaf.certificate) + TestPKI.pem(intermediate.certificate))
            .write(toFile: servedChainFile, atomically: true, encoding: .utf8)
        try leaf.key.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try TestPKI.pem(root.certificate).write(toFile: rootFile, atomically: true, encoding: .utf8)
        try TestPKI.pem(intermediate.certificate).write(toFile: intermediateFile, atomically: true, encoding: .utf8)
        try intermediate.key.pem.write(toFile: intermediateKeyFile, atomically: true, encoding: .utf8)
        try TestPKI.pem(leaf.certificate).write(toFile: leafFile, atomically: true, encoding: .utf8)
    }

    /// A CRL of the intermediate listing `revoked`, valid from an hour ago until `nextUpdate` seconds from now.
    func crl(revoking revoked: [X509Certificate], nextUpdate: Int = 86_400, name: String) throws -> String {
        guard let crl = X509_CRL_new() else { throw OpenSSLError.drain("X509_CRL_new") }
        defer { X509_CRL_free(crl) }
        let issuer = chain.intermediate
        X509_CRL_set_version(crl, 1)
        X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer.certificate.pointer))
        let now = time(nil)
        let last = ASN1_TIME_adj(nil, now, 0, -3600), next = ASN1_TIME_adj(nil, now, 0, nextUpdate)
        defer { ASN1_TIME_free(last); ASN1_TIME_free(next) }
        X509_CRL_set1_lastUpdate(crl, last)
        X509_CRL_set1_nextUpdate(crl, next)
        for certificate in revoked {
            guard let entry = X509_REVOKED_new() else { throw OpenSSLError.drain("X509_REVOKED_new") }
            X509_REVOKED_set_serialNumber(entry, X509_get_serialNumber(certificate.pointer))
            X509_REVOKED_set_revocationDate(entry, last)
            X509_CRL_add0_revoked(crl, entry)
        }
        let number = ASN1_INTEGER_new()
        defer { ASN1_INTEGER_free(number) }
        ASN1_INTEGER_set(number, 1)
        X509_CRL_add1_ext_i2d(crl, NID_crl_number, number, 0, 0)
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer.certificate.pointer, nil, nil, crl, 0)
        if let aki = X509V3_EXT_conf_nid(nil, &context, NID_authority_key_identifier, "keyid:always") {
            X509_CRL_add_ext(crl, aki, -1)
            X509_EXTENSION_free(aki)
        }
        X509_CRL_sort(crl)
        guard X509_CRL_sign(crl, issuer.key.pointer, EVP_sha256()) > 0 else { throw OpenSSLError.drain("X509_CRL_sign") }
        let pem = TestPKI.pem { PEM_write_bio_X509_CRL($0, crl) }
        let path = directory + "/\(name).crl.pem"
        try pem.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    enum LeafStatus { case good, revoked }

    /// A DER OCSP response for the leaf, made by `openssl ocsp` as the
    /// intermediate's responder (or by `signer`'s certificate and key, to forge one).
    func ocspResponse(_ status: LeafStatus, signer: (certificate: String, key: String)? = nil,
                      name: String) throws -> String {
        let serial = Self.serialHex(chain.leaf.certificate)
        let line = status == .good
            ? "V\t491231235959Z\t\t\(serial)\tunknown\t/CN=api.example.com\n"
            : "R\t491231235959Z\t\(Self.asn1Now())\t\(serial)\tunknown\t/CN=api.example.com\n"
        let index = directory + "/\(name).index.txt"
        try line.write(toFile: index, atomically: true, encoding: .utf8)
        let output = directory + "/\(name).ocsp.der"
        let rsigner = signer ?? (intermediateFile, intermediateKeyFile)
        let result = try ChildProcess.run("/usr/bin/openssl", [
            "ocsp", "-index", index, "-CA", intermediateFile, "-rsigner", rsigner.certificate, "-rkey", rsigner.key,
            "-issuer", intermediateFile, "-cert", leafFile, "-respout", output, "-ndays", "1", "-no_nonce"], timeout: 120)
        guard result.status == 0, FileManager.default.fileExists(atPath: output) else {
            throw TestFailure("openssl ocsp failed: \(result.errorOutput)")
        }
        return output
    }

    private static func serialHex(_ certificate: X509Certificate) -> String {
        guard let number = ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate.pointer), nil) else { return "00" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "00" }
        defer { shim_OPENSSL_free(hex) }
        let text = String(cString: hex)
        return text.count % 2 == 0 ? text : "0" + text
    }

    private static func asn1Now() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        return formatter.string(from: Date().addingTimeInterval(-3600))
    }
}

import Foundation
internal import COpenSSL

/// The fields of a certificate pinproxy's local CA signs (RFC 5280 §4.1):
/// Swift values, so the CA's rules (`Interception/`) never see a pointer.
struct CertificateRequest {
    /// Big-endian magnitude of the (positive) serial number.
    var serialNumber: [UInt8]
    /// The subject's commonName; nil for an empty subject (a name too long
    /// for CN's 64-character bound: the SAN, then critical, carries it).
    var commonName: String?
    var organization: String?
    var notBefore: Date
    var notAfter: Date
    /// The public key the certificate binds.
    var subjectKey: CertificatePublicKey
    /// In this order.
    var extensions: [EncodedExtension]
}

extension X509Certificate {
    /// Signs `request` with `key` (ECDSA with SHA-256): one signature, the
    /// only public-key operation here. `issuer` nil makes it self-signed
    /// (the issuer name is the subject's); otherwise `key` must be `issuer`'s.
    static func sign(_ request: CertificateRequest, issuer: X509Certificate?, key: CertificateSigningKey) throws -> X509Certificate {
        ERR_clear_error()
        guard let pointer = X509_new() else { throw OpenSSLError.drain("X509_new") }
        let certificate = X509Certificate(takingOwnership: pointer)
        guard X509_set_version(pointer, Int(X509_VERSION_3)) == 1,
              setSerialNumber(request.serialNumber, of: pointer),
              let subject = X509_get_subject_name(pointer),
              addEntry(NID_organizationName, request.organization, to: subject),
              addEntry(NID_commonName, request.commonName, to: subject),
              // set_issuer_name copies the name.
              X509_set_issuer_name(pointer, issuer.map { X509_get_subject_name($0.pointer) } ?? subject) == 1,
              ASN1_TIME_set(X509_getm_notBefore(pointer), time_t(request.notBefore.timeIntervalSince1970.rounded(.down))) != nil,
              ASN1_TIME_set(X509_getm_notAfter(pointer), time_t(request.notAfter.timeIntervalSince1970.rounded(.down))) != nil,
              // set_pubkey takes a reference to the (public-only) key and encodes it.
              X509_set_pubkey(pointer, request.subjectKey.pointer) == 1
        else { throw OpenSSLError.drain("build certificate \(request.commonName ?? "")") }
        // add_ext copies each extension.
        for encoded in request.extensions where X509_add_ext(pointer, encoded.pointer, -1) != 1 {
            throw OpenSSLError.drain("add extension to certificate \(request.commonName ?? "")")
        }
        guard key.sign(pointer) else {
            throw OpenSSLError.drain("sign certificate \(request.commonName ?? "")")
        }
        return certificate
    }

    private static func setSerialNumber(_ magnitude: [UInt8], of certificate: OpaquePointer) -> Bool {
        // BN_bin2bn reads an unsigned big-endian number, so the serial is positive (RFC 5280 §4.1.2.2).
        guard let number = BN_bin2bn(magnitude, Int32(magnitude.count), nil) else { return false }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else { return false }
        defer { ASN1_INTEGER_free(serial) }
        // set_serialNumber copies.
        return X509_set_serialNumber(certificate, serial) == 1
    }

    private static func addEntry(_ nid: Int32, _ value: String?, to name: OpaquePointer) -> Bool {
        guard let value else { return true }
        let bytes = Array(value.utf8)
        return X509_NAME_add_entry_by_NID(name, nid, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1
    }
}

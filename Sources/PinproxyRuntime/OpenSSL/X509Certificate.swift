import Foundation
import PinproxyCore
internal import COpenSSL

/// One X.509 certificate: the single owner of an `X509*`, freed in `deinit`.
///
/// Immutable once created, so it may be shared across threads (OpenSSL's
/// reference counting is atomic).
final class X509Certificate: @unchecked Sendable {
    /// The owned `X509*`; never null.
    let pointer: OpaquePointer

    /// Adopts `pointer` (for example from `d2i_X509`): this object releases it.
    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Shares `pointer` (for example one borrowed from an `X509_STORE_CTX`): takes a new reference.
    init(retaining pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Parses DER bytes; nil when they are not one certificate.
    convenience init?(der: [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        self.init(takingOwnership: parsed)
    }

    /// Loads every certificate of a PEM file (one or many `CERTIFICATE` blocks) or a DER file.
    /// Throws a `FileLoadError` naming the file when it holds no certificate or a bad one.
    static func load(contentsOf path: String) throws -> [X509Certificate] {
        try parse(PEMFile(contentsOf: path))
    }

    /// Parses certificates from in-memory PEM or DER; `source` names them in errors.
    static func parse(_ bytes: [UInt8], source: String) throws -> [X509Certificate] {
        try parse(PEMFile(bytes: bytes, path: source))
    }

    private static func parse(_ file: PEMFile) throws -> [X509Certificate] {
        let path = file.path
        if let der = file.der {
            guard let certificate = X509Certificate(der: der) else {
                throw FileLoadError(path: path, problem: "is neither PEM nor a DER certificate")
            }
            return [certificate]
        }
        var certificates: [X509Certificate] = []
        for (index, block) in file.blocks.enumerated() where block.label == "CERTIFICATE" {
            guard let certificate = X509Certificate(der: block.der) else {
                throw FileLoadError(path: path, problem: "PEM block \(index + 1) is not a valid certificate")
            }
            certificates.append(certificate)
        }
        guard !certificates.isEmpty else {
            throw FileLoadError(path: path, problem: "holds no CERTIFICATE block")
        }
        return certificates
    }

    /// The DER encoding.
    var der: [UInt8] { Self.encode { i2d_X509(pointer, $0) } }

    /// The DER SubjectPublicKeyInfo, the input of an SPKI pin.
    var subjectPublicKeyInfo: [UInt8] { Self.encode { i2d_X509_PUBKEY(X509_get_X509_PUBKEY(pointer), $0) } }

    /// The plain-value description handed to PinproxyCore.
    var facts: CertificateFacts {
        let der = self.der
        return CertificateFacts(der: der,
                                spkiSHA256: Digest.sha256(subjectPublicKeyInfo),
                                certificateSHA256: Digest.sha256(der),
                                subject: Self.rfc2253(X509_get_subject_name(pointer)),
                                issuer: Self.rfc2253(X509_get_issuer_name(pointer)),
                                notBefore: Self.date(X509_get0_notBefore(pointer)),
                                notAfter: Self.date(X509_get0_notAfter(pointer)),
                                profile: profile)
    }

    /// True when `other` is the same certificate (byte-equal DER).
    func isSame(as other: X509Certificate) -> Bool {
        pointer == other.pointer || X509_cmp(pointer, other.pointer) == 0
    }

    /// Runs an `i2d_*` encoder twice: once for the length, once into a buffer of that length.
    static func encode(_ encoder: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8] {
        let length = encoder(nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = encoder(&cursor)
        }
        return bytes
    }

    /// `XN_FLAG_RFC2253`, spelled out because Swift cannot import the composed macro.
    private static let rfc2253Flags = UInt(ASN1_STRFLGS_ESC_2253 | ASN1_STRFLGS_ESC_CTRL | ASN1_STRFLGS_ESC_MSB
        | ASN1_STRFLGS_UTF8_CONVERT | ASN1_STRFLGS_DUMP_UNKNOWN | ASN1_STRFLGS_DUMP_DER)
        | UInt(XN_FLAG_SEP_COMMA_PLUS) | UInt(XN_FLAG_DN_REV) | UInt(XN_FLAG_FN_SN) | UInt(XN_FLAG_DUMP_UNKNOWN_FIELDS)

    /// A name in RFC 2253 form (most specific RDN first, `CN=…,O=…`).
    static func rfc2253(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, rfc2253Flags) >= 0 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// An ASN.1 UTCTime/GeneralizedTime as a `Date` (UTC); the epoch when unreadable.
    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

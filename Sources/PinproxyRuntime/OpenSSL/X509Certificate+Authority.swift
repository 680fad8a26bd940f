import Foundation
internal import COpenSSL

/// One name of a name-constraint subtree (RFC 5280 §4.2.1.10), as read back
/// from a certificate.
enum ConstrainedName: Hashable, Sendable {
    /// A dNSName base, as written.
    case dns(String)
    /// An iPAddress range: address then mask (8 octets IPv4, 32 IPv6).
    case ipRange([UInt8])
    /// Any other GeneralName form, by its `GEN_*` type.
    case other(Int32)
}

/// A certificate's nameConstraints extension, every subtree of it.
struct NameConstraintSubtrees: Hashable, Sendable {
    var isCritical: Bool
    var permitted: [ConstrainedName]
    var excluded: [ConstrainedName]
    /// A subtree with a `minimum` other than 0 or any `maximum`: RFC 5280 forbids both.
    var hasDistanceBounds: Bool
}

/// What the local CA reads back from its own certificates: the constraints
/// it wrote, identifiers, serials, PEM; and whether one certificate is a
/// valid CA certificate issued by another.
extension X509Certificate {
    /// The nameConstraints extension, or nil when the certificate has none
    /// or it cannot be decoded.
    var nameConstraintSubtrees: NameConstraintSubtrees? {
        defer { ERR_clear_error() }
        var critical: Int32 = -1
        // d2i returns a new NAME_CONSTRAINTS; freed below.
        guard let raw = X509_get_ext_d2i(pointer, NID_name_constraints, &critical, nil) else { return nil }
        let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(constraints) }
        var bounded = false
        func names(_ stack: OpaquePointer?) -> [ConstrainedName] {
            guard let stack else { return [] }
            return (0..<max(0, shim_sk_GENERAL_SUBTREE_num(stack))).compactMap { index in
                guard let subtree = shim_sk_GENERAL_SUBTREE_value(stack, index) else { return nil }
                if subtree.pointee.maximum != nil || subtree.pointee.minimum.map({ ASN1_INTEGER_get($0) != 0 }) ?? false {
                    bounded = true
                }
                return subtree.pointee.base.map(Self.constrainedName)
            }
        }
        return NameConstraintSubtrees(isCritical: critical == 1, permitted: names(constraints.pointee.permittedSubtrees),
                                      excluded: names(constraints.pointee.excludedSubtrees), hasDistanceBounds: bounded)
    }

    private static func constrainedName(_ name: UnsafeMutablePointer<GENERAL_NAME>) -> ConstrainedName {
        func bytes(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> [UInt8] {
            guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
            return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
        }
        switch name.pointee.type {
        case GEN_DNS: return .dns(String(decoding: bytes(name.pointee.d.dNSName), as: UTF8.self))
        case GEN_IPADD: return .ipRange(bytes(name.pointee.d.iPAddress))
        default: return .other(name.pointee.type)
        }
    }

    /// The certificate in PEM (`-----BEGIN CERTIFICATE-----`).
    var pem: [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { return [] }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, pointer) == 1 else { ERR_clear_error(); return [] }
        return PrivateKey.contents(of: bio)
    }

    /// The serial number's big-endian magnitude.
    var serialNumber: [UInt8] {
        guard let serial = X509_get0_serialNumber(pointer), let number = ASN1_INTEGER_to_BN(serial, nil) else { return [] }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }

    /// The subjectKeyIdentifier, empty when absent.
    var subjectKeyIdentifier: [UInt8] {
        guard let identifier = X509_get0_subject_key_id(pointer), let data = ASN1_STRING_get0_data(identifier) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(identifier))))
    }

    /// basicConstraints pathLenConstraint; nil when absent (or not a CA).
    var pathLengthConstraint: Int? {
        let length = X509_get_pathlen(pointer)
        return length < 0 ? nil : length
    }

    /// Validates this CA certificate as issued by `root` at `time`: signature,
    /// validity, CA flags, key usage, path length and the name constraints of
    /// both, with `X509_V_FLAG_X509_STRICT` (RFC 5280 encoding rules).
    /// Returns nil when valid, else OpenSSL's reason.
    func validationFailure(issuedBy root: X509Certificate, at time: Date) -> String? {
        do {
            let store = try TrustStore.anchors([root])
            let context = try X509StoreContext(store: store, leaf: self, untrusted: [], at: time)
            guard let parameters = X509_STORE_CTX_get0_param(context.pointer) else { return "no verify parameters" }
            // Not ssl_server: this is a CA certificate, which carries no serverAuth key usage.
            X509_VERIFY_PARAM_set_purpose(parameters, X509_PURPOSE_ANY)
            // CHECK_SS_SIGNATURE: the root's own self-signature too, which OpenSSL skips on anchors by default.
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT | X509_V_FLAG_CHECK_SS_SIGNATURE))
            ERR_clear_error()
            if X509_verify_cert(context.pointer) == 1 { return nil }
            let code = X509_STORE_CTX_get_error(context.pointer)
            ERR_clear_error()
            return String(cString: X509_verify_cert_error_string(Int(code)))
        } catch {
            return "\(error)"
        }
    }
}

import PinproxyCore
internal import COpenSSL

extension X509Certificate {
    /// The facts the web-PKI profile checks read, from OpenSSL's parsed
    /// extensions. Extensions that are absent cost one flag or index lookup;
    /// only present ones are decoded.
    var profile: CertificateProfile {
        // A malformed extension leaves errors on the queue; the handshake must not read them later.
        defer { ERR_clear_error() }
        // X509_get_extension_flags caches the parsed extensions on first use (thread-safe in OpenSSL 3).
        let flags = X509_get_extension_flags(pointer)
        return CertificateProfile(
            publicKey: publicKeyKind,
            isCA: flags & UInt32(EXFLAG_BCONS) != 0 && flags & UInt32(EXFLAG_CA) != 0,
            isSelfIssued: flags & UInt32(EXFLAG_SI) != 0,
            extendedKeyUsage: flags & UInt32(EXFLAG_XKUSAGE) != 0 ? extendedKeyUsageOIDs : nil,
            dnsNames: has(NID_subject_alt_name) ? dnsNames : [],
            nameConstraints: nameConstraints,
            requiresOCSPStaple: has(NID_tlsfeature) && listsStatusRequest)
    }

    private func has(_ nid: Int32) -> Bool { X509_get_ext_by_NID(pointer, nid, -1) >= 0 }

    /// The key type and size, with NIST names for the BR curves.
    private var publicKeyKind: CertificateProfile.PublicKey {
        guard let key = X509_get0_pubkey(pointer) else { return .other("unreadable") }
        let bits = Int(EVP_PKEY_get_bits(key))
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS: return .rsa(bits: bits)
        case EVP_PKEY_DSA: return .dsa(bits: bits)
        case EVP_PKEY_ED25519: return .edwards("Ed25519")
        case EVP_PKEY_ED448: return .edwards("Ed448")
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1, length > 0 else { return .explicitCurve }
            let group = String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .ellipticCurve(Self.nistCurveNames[group] ?? group)
        default:
            let name = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown"
            return .other(name)
        }
    }

    private static let nistCurveNames = ["prime256v1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521",
                                         "prime192v1": "P-192", "secp224r1": "P-224"]

    private var extendedKeyUsageOIDs: [String] {
        // d2i returns a new STACK_OF(ASN1_OBJECT); EXTENDED_KEY_USAGE_free releases it.
        guard let raw = X509_get_ext_d2i(pointer, NID_ext_key_usage, nil, nil) else { return [] }
        let usages = OpaquePointer(raw)
        defer { EXTENDED_KEY_USAGE_free(usages) }
        return (0..<max(0, OPENSSL_sk_num(usages))).compactMap { index in
            OPENSSL_sk_value(usages, index).map { Self.dottedOID(OpaquePointer($0)) }
        }
    }

    private var dnsNames: [String] {
        // d2i returns a new GENERAL_NAMES; freed below.
        guard let raw = X509_get_ext_d2i(pointer, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { shim_GENERAL_NAMES_free(names) }
        return (0..<max(0, shim_sk_GENERAL_NAME_num(names))).compactMap { index in
            shim_sk_GENERAL_NAME_value(names, index).flatMap { Self.dnsName(in: $0) }
        }
    }

    private var nameConstraints: NameConstraints? {
        let index = X509_get_ext_by_NID(pointer, NID_name_constraints, -1)
        guard index >= 0 else { return nil }
        let isCritical = X509_EXTENSION_get_critical(X509_get_ext(pointer, index)) == 1
        // d2i returns a new NAME_CONSTRAINTS; freed below. A malformed one makes
        // OpenSSL mark the certificate invalid, which path validation refuses.
        guard let raw = X509_get_ext_d2i(pointer, NID_name_constraints, nil, nil) else {
            return NameConstraints(isCritical: isCritical, hasPermittedSubtrees: false, hasExcludedSubtrees: false)
        }
        let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(constraints) }
        let permitted = constraints.pointee.permittedSubtrees, excluded = constraints.pointee.excludedSubtrees
        return NameConstraints(isCritical: isCritical,
                               hasPermittedSubtrees: permitted.map { shim_sk_GENERAL_SUBTREE_num($0) > 0 } ?? false,
                               hasExcludedSubtrees: excluded.map { shim_sk_GENERAL_SUBTREE_num($0) > 0 } ?? false,
                               permittedDNS: Self.dnsBases(permitted), excludedDNS: Self.dnsBases(excluded))
    }

    /// RFC 7633: the TLS Feature extension lists status_request (5).
    private var listsStatusRequest: Bool {
        // d2i returns a new STACK_OF(ASN1_INTEGER); pop_free releases it and its elements.
        guard let raw = X509_get_ext_d2i(pointer, NID_tlsfeature, nil, nil) else { return false }
        let features = OpaquePointer(raw)
        defer { shim_sk_ASN1_INTEGER_pop_free(features) }
        return (0..<max(0, shim_sk_ASN1_INTEGER_num(features))).contains { index in
            shim_sk_ASN1_INTEGER_value(features, index).map { ASN1_INTEGER_get($0) == 5 } ?? false
        }
    }

    private static func dnsBases(_ subtrees: OpaquePointer?) -> [String] {
        guard let subtrees else { return [] }
        return (0..<max(0, shim_sk_GENERAL_SUBTREE_num(subtrees))).compactMap { index in
            shim_sk_GENERAL_SUBTREE_value(subtrees, index).flatMap { $0.pointee.base.flatMap(dnsName(in:)) }
        }
    }

    /// The IA5String of a dNSName GeneralName, byte for byte; nil for other forms.
    private static func dnsName(in name: UnsafeMutablePointer<GENERAL_NAME>) -> String? {
        guard name.pointee.type == GEN_DNS, let string = name.pointee.d.dNSName,
              let data = ASN1_STRING_get0_data(string) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))), as: UTF8.self)
    }

    private static func dottedOID(_ object: OpaquePointer) -> String {
        var text = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&text, Int32(text.count), object, 1)
        guard length > 0 else { return "" }
        return String(decoding: text[..<min(Int(length), text.count - 1)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

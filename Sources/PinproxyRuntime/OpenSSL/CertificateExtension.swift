internal import COpenSSL

/// An X.509 v3 extension pinproxy's local CA writes (RFC 5280 §4.2), as a
/// value; `EncodedExtension` turns it into DER once, so a leaf's constant
/// extensions are encoded per CA generation, not per leaf.
///
/// The structures are built field by field with OpenSSL's ASN.1 types, not
/// from `openssl.cnf`-style strings: no name ever passes through a parser.
enum CertificateExtension: Hashable {
    /// Key usage bits (RFC 5280 §4.2.1.3), by their bit number.
    enum KeyUsage: Int32, Hashable {
        case digitalSignature = 0
        case keyCertSign = 5
        case cRLSign = 6
    }

    /// basicConstraints, always critical here (RFC 5280 §4.2.1.9: MUST be
    /// critical in CA certificates; a leaf's `CA:FALSE` is marked critical
    /// too, as the CA/Browser Forum allows, so no client can misread it).
    case basicConstraints(isCA: Bool, pathLength: Int?)
    /// keyUsage, critical (RFC 5280 §4.2.1.3: SHOULD be critical).
    case keyUsage(Set<KeyUsage>)
    /// extendedKeyUsage with id-kp-serverAuth only, not critical.
    case serverAuthOnly
    /// subjectKeyIdentifier: the given key identifier (RFC 5280 §4.2.1.2 method 1).
    case subjectKeyIdentifier([UInt8])
    /// authorityKeyIdentifier with the issuer's key identifier only (RFC 5280 §4.2.1.1).
    case authorityKeyIdentifier([UInt8])
    /// subjectAltName with one dNSName; critical when the subject is empty (RFC 5280 §4.2.1.6).
    case subjectAlternativeName(dnsName: String, isCritical: Bool)
    /// nameConstraints, critical (RFC 5280 §4.2.1.10: MUST be critical):
    /// dNSName permitted subtrees, and the excluded iPAddress ranges
    /// (8 octets for IPv4 address + mask, 32 for IPv6).
    case nameConstraints(permittedDNS: [String], excludedIPRanges: [[UInt8]])
}

/// One DER-encoded `X509_EXTENSION`: the single owner, freed in `deinit`.
/// Immutable; `X509_add_ext` copies it into each certificate, so one may be
/// shared by every leaf a CA generation mints, on any thread.
final class EncodedExtension: @unchecked Sendable {
    /// The owned `X509_EXTENSION*`; never null.
    let pointer: OpaquePointer

    init(_ value: CertificateExtension) throws {
        ERR_clear_error()
        guard let pointer = Self.encode(value) else { throw OpenSSLError.drain("encode extension \(value)") }
        self.pointer = pointer
    }

    deinit { X509_EXTENSION_free(pointer) }

    /// `X509V3_EXT_i2d` of the OpenSSL structure for `value`; the structure is freed here.
    private static func encode(_ value: CertificateExtension) -> OpaquePointer? {
        switch value {
        case let .basicConstraints(isCA, pathLength):
            guard let constraints = BASIC_CONSTRAINTS_new() else { return nil }
            defer { BASIC_CONSTRAINTS_free(constraints) }
            // ASN1_BOOLEAN: 0xff is TRUE; FALSE (the DEFAULT) is omitted from the DER.
            constraints.pointee.ca = isCA ? 0xff : 0
            if let pathLength {
                guard let length = ASN1_INTEGER_new(), ASN1_INTEGER_set(length, pathLength) == 1 else { return nil }
                constraints.pointee.pathlen = length
            }
            return X509V3_EXT_i2d(NID_basic_constraints, 1, constraints)
        case let .keyUsage(usages):
            guard let bits = ASN1_BIT_STRING_new() else { return nil }
            defer { ASN1_BIT_STRING_free(bits) }
            for usage in usages where ASN1_BIT_STRING_set_bit(bits, usage.rawValue, 1) != 1 { return nil }
            return X509V3_EXT_i2d(NID_key_usage, 1, bits)
        case .serverAuthOnly:
            guard let usages = shim_sk_ASN1_OBJECT_new_null() else { return nil }
            // OBJ_nid2obj returns a static object; pop_free leaves static objects alone.
            defer { shim_sk_ASN1_OBJECT_pop_free(usages) }
            guard shim_sk_ASN1_OBJECT_push(usages, OBJ_nid2obj(NID_server_auth)) > 0 else { return nil }
            return X509V3_EXT_i2d(NID_ext_key_usage, 0, UnsafeMutableRawPointer(usages))
        case let .subjectKeyIdentifier(identifier):
            guard let octets = octetString(identifier) else { return nil }
            defer { ASN1_OCTET_STRING_free(octets) }
            return X509V3_EXT_i2d(NID_subject_key_identifier, 0, octets)
        case let .authorityKeyIdentifier(identifier):
            guard let keyID = AUTHORITY_KEYID_new() else { return nil }
            defer { AUTHORITY_KEYID_free(keyID) }
            // The AUTHORITY_KEYID owns the octet string from here on.
            keyID.pointee.keyid = octetString(identifier)
            guard keyID.pointee.keyid != nil else { return nil }
            return X509V3_EXT_i2d(NID_authority_key_identifier, 0, keyID)
        case let .subjectAlternativeName(dnsName, isCritical):
            guard let names = shim_sk_GENERAL_NAME_new_null() else { return nil }
            defer { shim_GENERAL_NAMES_free(names) }
            guard let name = generalName(dns: dnsName) else { return nil }
            guard shim_sk_GENERAL_NAME_push(names, name) > 0 else { GENERAL_NAME_free(name); return nil }
            return X509V3_EXT_i2d(NID_subject_alt_name, isCritical ? 1 : 0, UnsafeMutableRawPointer(names))
        case let .nameConstraints(permittedDNS, excludedIPRanges):
            return encodeNameConstraints(permittedDNS: permittedDNS, excludedIPRanges: excludedIPRanges)
        }
    }

    private static func encodeNameConstraints(permittedDNS: [String], excludedIPRanges: [[UInt8]]) -> OpaquePointer? {
        // No permitted dNSName subtree would leave every DNS name permitted (RFC 5280 §4.2.1.10).
        guard !permittedDNS.isEmpty, let constraints = NAME_CONSTRAINTS_new() else { return nil }
        // NAME_CONSTRAINTS_free frees both stacks, their subtrees and names.
        defer { NAME_CONSTRAINTS_free(constraints) }
        /// A stack with one subtree per name; nil unless every name made it in (a short list would widen the constraints).
        func subtrees(_ names: [() -> UnsafeMutablePointer<GENERAL_NAME>?],
                      into slot: UnsafeMutablePointer<OpaquePointer?>) -> Bool {
            guard !names.isEmpty else { return true }
            guard let stack = shim_sk_GENERAL_SUBTREE_new_null() else { return false }
            // The NAME_CONSTRAINTS owns the stack from here on, complete or not.
            slot.pointee = stack
            for make in names {
                guard let name = make() else { return false }
                guard let subtree = GENERAL_SUBTREE_new() else { GENERAL_NAME_free(name); return false }
                // GENERAL_SUBTREE_new allocates an empty base; the subtree owns `name` instead.
                GENERAL_NAME_free(subtree.pointee.base)
                subtree.pointee.base = name
                guard shim_sk_GENERAL_SUBTREE_push(stack, subtree) > 0 else { GENERAL_SUBTREE_free(subtree); return false }
            }
            return true
        }
        guard subtrees(permittedDNS.map { name in { generalName(dns: name) } }, into: &constraints.pointee.permittedSubtrees),
              subtrees(excludedIPRanges.map { range in { generalName(ipRange: range) } }, into: &constraints.pointee.excludedSubtrees)
        else { return nil }
        return X509V3_EXT_i2d(NID_name_constraints, 1, constraints)
    }

    /// A dNSName GeneralName (an IA5String), owned by the caller.
    private static func generalName(dns: String) -> UnsafeMutablePointer<GENERAL_NAME>? {
        guard let name = GENERAL_NAME_new() else { return nil }
        guard let string = ASN1_IA5STRING_new() else { GENERAL_NAME_free(name); return nil }
        let bytes = Array(dns.utf8)
        guard ASN1_STRING_set(string, bytes, Int32(bytes.count)) == 1 else {
            ASN1_IA5STRING_free(string)
            GENERAL_NAME_free(name)
            return nil
        }
        // set0: the GENERAL_NAME owns the string.
        GENERAL_NAME_set0_value(name, GEN_DNS, UnsafeMutableRawPointer(string))
        return name
    }

    /// An iPAddress GeneralName holding `range` (address then mask), owned by the caller.
    private static func generalName(ipRange range: [UInt8]) -> UnsafeMutablePointer<GENERAL_NAME>? {
        guard let name = GENERAL_NAME_new() else { return nil }
        guard let octets = octetString(range) else { GENERAL_NAME_free(name); return nil }
        GENERAL_NAME_set0_value(name, GEN_IPADD, UnsafeMutableRawPointer(octets))
        return name
    }

    private static func octetString(_ bytes: [UInt8]) -> UnsafeMutablePointer<ASN1_OCTET_STRING>? {
        guard let octets = ASN1_OCTET_STRING_new() else { return nil }
        guard ASN1_OCTET_STRING_set(octets, bytes, Int32(bytes.count)) == 1 else {
            ASN1_OCTET_STRING_free(octets)
            return nil
        }
        return octets
    }
}

/// The parts of a certificate that the web-PKI profile checks read (SPEC §2.3
/// step 2): its key, its role, its names and the constraints it places on the
/// certificates below it. Gathered by the runtime from OpenSSL's parsed
/// extensions, as plain values.
public struct CertificateProfile: Sendable, Hashable {
    /// A subject public key as the CA/B Forum Baseline Requirements §6.1.5 classify it.
    public enum PublicKey: Sendable, Hashable {
        case rsa(bits: Int)
        /// A named curve, spelled as NIST does (`P-256`), or OpenSSL's short name for others.
        case ellipticCurve(String)
        /// An elliptic-curve key with explicit (unnamed) parameters.
        case explicitCurve
        case dsa(bits: Int)
        /// Ed25519 or Ed448.
        case edwards(String)
        /// Any other algorithm, by OpenSSL's name for it.
        case other(String)
    }

    public var publicKey: PublicKey
    /// basicConstraints with cA TRUE.
    public var isCA: Bool
    /// Subject and issuer names are equal (RFC 5280 §6.1: "self-issued").
    public var isSelfIssued: Bool
    /// The extendedKeyUsage purposes as dotted OIDs; nil when the extension is absent.
    public var extendedKeyUsage: [String]?
    /// The subjectAltName dNSName entries, as written (IA5String bytes).
    public var dnsNames: [String]
    /// The nameConstraints extension; nil when absent.
    public var nameConstraints: NameConstraints?
    /// The TLS Feature extension (RFC 7633) lists status_request: "must-staple".
    public var requiresOCSPStaple: Bool

    public init(publicKey: PublicKey, isCA: Bool, isSelfIssued: Bool = false, extendedKeyUsage: [String]? = nil,
                dnsNames: [String] = [], nameConstraints: NameConstraints? = nil, requiresOCSPStaple: Bool = false) {
        self.publicKey = publicKey
        self.isCA = isCA
        self.isSelfIssued = isSelfIssued
        self.extendedKeyUsage = extendedKeyUsage
        self.dnsNames = dnsNames
        self.nameConstraints = nameConstraints
        self.requiresOCSPStaple = requiresOCSPStaple
    }

    /// id-kp-serverAuth (RFC 5280 §4.2.1.12).
    public static let serverAuth = "1.3.6.1.5.5.7.3.1"
    /// anyExtendedKeyUsage (RFC 5280 §4.2.1.12).
    public static let anyExtendedKeyUsage = "2.5.29.37.0"
}

/// A certificate's nameConstraints extension (RFC 5280 §4.2.1.10), as far as
/// pinproxy checks it itself: the dNSName subtrees. OpenSSL checks the other
/// name forms (IP, directory names) during path validation.
public struct NameConstraints: Sendable, Hashable {
    public var isCritical: Bool
    /// permittedSubtrees is present with at least one subtree (of any name form).
    public var hasPermittedSubtrees: Bool
    /// excludedSubtrees is present with at least one subtree (of any name form).
    public var hasExcludedSubtrees: Bool
    /// The dNSName bases of the permitted and excluded subtrees, as written.
    public var permittedDNS: [String]
    public var excludedDNS: [String]

    public init(isCritical: Bool, hasPermittedSubtrees: Bool, hasExcludedSubtrees: Bool,
                permittedDNS: [String] = [], excludedDNS: [String] = []) {
        self.isCritical = isCritical
        self.hasPermittedSubtrees = hasPermittedSubtrees
        self.hasExcludedSubtrees = hasExcludedSubtrees
        self.permittedDNS = permittedDNS
        self.excludedDNS = excludedDNS
    }
}

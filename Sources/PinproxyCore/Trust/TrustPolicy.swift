import Foundation

/// The evaluation a host entry asks for (SPEC §2.1), after Alamofire's
/// ServerTrustPolicy cases. Raw values are the config's stable identifiers.
public enum PolicyKind: String, Sendable, Hashable, CaseIterable {
    case `default` = "default"
    case pinPublicKeys = "pin-public-keys"
    case pinCertificates = "pin-certificates"
    case anchors = "anchors"
    case disable = "disable"
    case custom = "custom"
}

/// Lowest TLS version a host entry accepts (`min_tls_version`).
public enum TLSVersionFloor: String, Sendable, Hashable {
    case tls12 = "1.2"
    case tls13 = "1.3"
}

/// A client certificate and key (PEM files) presented only to hosts configured with one.
public struct ClientCredentialFiles: Sendable, Hashable {
    public var certificatePath: String
    public var keyPath: String
    public init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }
}

/// A calendar day (UTC) after which a pin set is no longer enforced (`expires`).
public struct PinExpiry: Sendable, Hashable, CustomStringConvertible {
    public let year: Int, month: Int, day: Int
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let calendar = Self.utc
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.component(.day, from: date) == day else { return nil }
        self.year = year; self.month = month; self.day = day
    }
    /// The first instant at which the pins no longer apply: the start of the next day, UTC.
    /// "expires": "2027-06-30" keeps the pins for the whole of 30 June.
    public var firstExpiredInstant: Date {
        let calendar = Self.utc
        let start = calendar.date(from: DateComponents(year: year, month: month, day: day))!
        return calendar.date(byAdding: .day, value: 1, to: start)!
    }
    public func hasPassed(at now: Date) -> Bool { now >= firstExpiredInstant }
    /// Made once: a calendar made per call was most of the cost of a rule with `expires`.
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
    public var description: String {
        func pad(_ n: Int, _ w: Int) -> String { let s = String(n); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}

/// Everything pinproxy must know to evaluate one upstream host: the policy of
/// a `hosts` entry (or `default_policy`), validated and immutable.
///
/// File-backed material (`public_keys`, `certificates`, `anchors`, client
/// credentials) is kept as paths here; the runtime loads and digests it when a
/// configuration is built, so PinproxyCore never needs a certificate parser.
public struct TrustPolicy: Sendable, Hashable {
    public var kind: PolicyKind
    /// SPKI pins written inline (`pins`).
    public var pins: [SPKIPin]
    /// PEM files of keys or certificates whose SPKI is pinned (`public_keys`).
    public var publicKeyFiles: [String]
    /// PEM/DER certificate files pinned byte for byte (`certificates`).
    public var certificateFiles: [String]
    /// PEM/DER CA files that replace the trust store for this host (`anchors`).
    public var anchorFiles: [String]
    public var validateChain: Bool
    public var validateHost: Bool
    public var includeSubdomains: Bool
    /// false = report-only: every failure is logged and the request goes on.
    public var enforce: Bool
    public var expires: PinExpiry?
    public var minTLSVersion: TLSVersionFloor
    public var requireForwardSecrecy: Bool
    public var clientCredentials: ClientCredentialFiles?
    /// `report_uri`: an `http://` collector that receives an RFC 7469 report
    /// for each distinct violation (at most one per event key and minute).
    public var reportURI: String?
    /// `crl_files`: PEM/DER CRLs consulted during path validation.
    public var crlFiles: [String]
    /// `ocsp_stapling` (default `"check"`).
    public var ocspStapling: OCSPStaplingMode
    /// `"pins": "learn"` (SPEC §2.1, trust on first use): `pins` is empty
    /// here; the runtime enforces what the rule's first verified handshake
    /// recorded, and until then only `default` evaluation.
    public var learnsPins: Bool
    /// `policy: "custom"`: the external command that decides (SPEC §2.1); nil for every other policy.
    public var customCheck: CustomCheckSettings? {
        get { customCheckBox?.settings }
        set { customCheckBox = newValue.map(CustomCheckSettings.Box.init) }
    }
    /// One reference instead of the settings inline: every rule of a large
    /// configuration holds a policy (twice: its rule and its prepared policy),
    /// and only custom rules have settings.
    private var customCheckBox: CustomCheckSettings.Box?

    public init(kind: PolicyKind,
                pins: [SPKIPin] = [],
                publicKeyFiles: [String] = [],
                certificateFiles: [String] = [],
                anchorFiles: [String] = [],
                validateChain: Bool = true,
                validateHost: Bool = true,
                includeSubdomains: Bool = false,
                enforce: Bool = true,
                expires: PinExpiry? = nil,
                minTLSVersion: TLSVersionFloor = .tls12,
                requireForwardSecrecy: Bool = true,
                clientCredentials: ClientCredentialFiles? = nil,
                reportURI: String? = nil,
                crlFiles: [String] = [],
                ocspStapling: OCSPStaplingMode = .check,
                learnsPins: Bool = false,
                customCheck: CustomCheckSettings? = nil) {
        self.kind = kind
        self.pins = pins
        self.publicKeyFiles = publicKeyFiles
        self.certificateFiles = certificateFiles
        self.anchorFiles = anchorFiles
        self.validateChain = validateChain
        self.validateHost = validateHost
        self.includeSubdomains = includeSubdomains
        self.enforce = enforce
        self.expires = expires
        self.minTLSVersion = minTLSVersion
        self.requireForwardSecrecy = requireForwardSecrecy
        self.clientCredentials = clientCredentials
        self.reportURI = reportURI
        self.crlFiles = crlFiles
        self.ocspStapling = ocspStapling
        self.learnsPins = learnsPins
        self.customCheckBox = customCheck.map(CustomCheckSettings.Box.init)
    }

    /// performDefaultEvaluation: chain to the trust store and host name.
    public static let standard = TrustPolicy(kind: .default)
}

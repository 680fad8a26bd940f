/// A normalised upstream host: lower-case A-label or IP literal, no trailing dot,
/// IPv6 without brackets.
///
/// Every comparison of host names in pinproxy goes through this type so that
/// case and the trailing dot can never make two spellings of one host differ.
public struct HostName: Hashable, Sendable, CustomStringConvertible {
    /// The normalised text (`api.example.com`, `127.0.0.1`, `::1`).
    public let value: String

    /// Normalises `raw`; nil when it is not a syntactically valid DNS name
    /// (LDH labels of 1–63 octets, 253 octets in all) or IP literal.
    public init?(_ raw: String) {
        guard let normalised = HostNameSyntax.normalise(raw) else { return nil }
        value = normalised
    }

    /// True for IPv4 and IPv6 literals.
    public var isIPAddress: Bool { HostNameSyntax.isIPv4(value) || HostNameSyntax.isIPv6(value) }

    /// True for an IPv6 literal (needs brackets in an authority).
    public var isIPv6: Bool { HostNameSyntax.isIPv6(value) }

    /// The labels of a DNS name, left to right (empty for IP literals).
    public var labels: [Substring] { isIPAddress ? [] : value.split(separator: ".", omittingEmptySubsequences: false) }

    public var description: String { value }
}

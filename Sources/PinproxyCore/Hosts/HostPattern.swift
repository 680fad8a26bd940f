/// A `hosts` key of the configuration: which upstream names a rule covers
/// (SPEC §2.2).
///
/// Three forms, all compared on normalised names (lower case, no trailing dot):
/// - `api.example.com` — that host; with `include_subdomains` also every name below it.
/// - `*.example.com` — exactly one more label (`a.example.com`; not
///   `a.b.example.com`, not `example.com`). `*` only as the whole leftmost label.
/// - `**.example.com` — `example.com` and every name below it.
/// IP literals match exactly and take no wildcard; an IP host never matches a
/// name pattern (`*.0.0.1` must not match `127.0.0.1`).
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    /// The shape of a pattern and the name it is anchored at.
    public enum Form: Sendable, Hashable {
        /// Exactly this host (and, with include_subdomains, everything below).
        case exact(HostName)
        /// `*.suffix`: one label, any, followed by `suffix`.
        case oneLabelBelow(HostName)
        /// `**.suffix`: `suffix` itself and every name below it.
        case subtree(HostName)
    }

    public let form: Form

    /// Parses a `hosts` key; nil when it is not a host name, an IP literal, or
    /// `*.`/`**.` followed by a host name (at least one label, not an IP).
    public init?(_ key: String) {
        if key.hasPrefix("**.") {
            guard let suffix = HostName(String(key.dropFirst(3))), !suffix.isIPAddress else { return nil }
            form = .subtree(suffix)
        } else if key.hasPrefix("*.") {
            guard let suffix = HostName(String(key.dropFirst(2))), !suffix.isIPAddress else { return nil }
            form = .oneLabelBelow(suffix)
        } else {
            guard let host = HostName(key) else { return nil }
            form = .exact(host)
        }
    }

    /// The normalised key (`*.example.com`, `::1`), used as `rule` in violation events.
    public var key: String {
        switch form {
        case .exact(let host): host.value
        case .oneLabelBelow(let suffix): "*." + suffix.value
        case .subtree(let suffix): "**." + suffix.value
        }
    }

    /// The name the pattern is anchored at (the host itself, or the wildcard's suffix).
    public var anchor: HostName {
        switch form {
        case .exact(let host), .oneLabelBelow(let host), .subtree(let host): host
        }
    }

    /// True for a wildcard key (`*.` or `**.`).
    public var isWildcard: Bool {
        if case .exact = form { return false }
        return true
    }

    /// Whether `host` is covered. `includeSubdomains` widens only an exact DNS
    /// name; wildcard keys already say how deep they reach, and an IP literal
    /// has no subdomains.
    public func matches(_ host: HostName, includeSubdomains: Bool) -> Bool {
        switch form {
        case .exact(let name):
            if host == name { return true }
            return includeSubdomains && !name.isIPAddress && !host.isIPAddress && Self.isStrictlyBelow(host, name)
        case .oneLabelBelow(let suffix):
            guard !host.isIPAddress, Self.isStrictlyBelow(host, suffix) else { return false }
            let extra = host.value.utf8.count - suffix.value.utf8.count - 1
            return !host.value.utf8.prefix(extra).contains(UInt8(ascii: "."))
        case .subtree(let suffix):
            return !host.isIPAddress && (host == suffix || Self.isStrictlyBelow(host, suffix))
        }
    }

    /// `host` ends in `.` + `suffix` on a label boundary (so `notexample.com`
    /// is not below `example.com`).
    static func isStrictlyBelow(_ host: HostName, _ suffix: HostName) -> Bool {
        let hostBytes = host.value.utf8, suffixBytes = suffix.value.utf8
        guard hostBytes.count > suffixBytes.count + 1 else { return false }
        let boundary = hostBytes.index(hostBytes.endIndex, offsetBy: -suffixBytes.count - 1)
        return hostBytes[boundary] == UInt8(ascii: ".")
            && hostBytes[hostBytes.index(after: boundary)...].elementsEqual(suffixBytes)
    }

    public var description: String { key }
}

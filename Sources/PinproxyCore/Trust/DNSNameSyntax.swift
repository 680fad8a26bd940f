/// The DNS name syntax RFC 5280 requires of dNSName entries (§4.2.1.6: "MUST
/// be in the preferred name syntax" of RFC 1034 §3.5 as modified by RFC 1123
/// §2.1), and the subtree relation of dNSName constraints (§4.2.1.10).
///
/// Names are compared as ASCII without regard to case; IDNs appear as A-labels.
enum DNSNameSyntax {
    /// Labels of letters, digits and inner hyphens, 1…63 bytes each, 253 in
    /// all, no empty label (so no leading, trailing or doubled dot). The
    /// underscore is not allowed (RFC 1034 §3.5; the CA/B Forum stopped its
    /// issuance in 2019, ballot SC12).
    static func isPreferredName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        return bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy(isLabel)
    }

    /// A presented dNSName: a preferred name, or one whose leftmost label is
    /// exactly `*` over a preferred name of at least two labels (RFC 6125
    /// §6.4.3; the CA/B Forum BR's "Wildcard Domain Name").
    static func isPresentedName(_ name: String) -> Bool {
        guard let base = wildcardBase(of: name) else { return isPreferredName(name) }
        return isPreferredName(base) && base.contains(".")
    }

    /// The name below `*.` when `name` is a wildcard name, else nil.
    static func wildcardBase(of name: String) -> String? {
        name.hasPrefix("*.") ? String(name.dropFirst(2)) : nil
    }

    /// A dNSName constraint base: empty (every name) or a preferred name. RFC
    /// 5280 allows a leading period only in URI and rfc822Name constraints;
    /// in a dNSName constraint it is malformed.
    static func isConstraintBase(_ base: String) -> Bool {
        base.isEmpty || isPreferredName(base)
    }

    /// RFC 5280 §4.2.1.10: `name` satisfies the constraint `base` when it is
    /// `base` with zero or more labels added on the left.
    static func isWithin(_ name: String, subtree base: String) -> Bool {
        if base.isEmpty { return true }
        let name = name.lowercased(), base = base.lowercased()
        return name == base || name.hasSuffix("." + base)
    }

    /// Whether some name a presented dNSName can match lies in the subtree of
    /// `base`. A wildcard `*.X` matches every `L.X` for one label L, so it
    /// reaches the subtree of `base` when `X` is inside it or when `base` is
    /// itself one label below `X` (CVE-2025-61727: an excluded
    /// `bar.example.com` under a SAN `*.example.com`).
    static func reaches(_ presented: String, subtree base: String) -> Bool {
        guard let wildcardBase = wildcardBase(of: presented) else { return isWithin(presented, subtree: base) }
        if isWithin(wildcardBase, subtree: base) { return true }
        let base = base.lowercased()
        guard let dot = base.firstIndex(of: ".") else { return false }
        return base[base.index(after: dot)...] == wildcardBase.lowercased()
    }

    /// Whether every name a presented dNSName can match lies in the subtree of `base`.
    static func isCovered(_ presented: String, bySubtree base: String) -> Bool {
        isWithin(wildcardBase(of: presented) ?? presented, subtree: base)
    }

    private static func isLabel(_ label: ArraySlice<UInt8>) -> Bool {
        guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
            return false
        }
        return label.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
    }
}

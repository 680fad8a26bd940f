/// Validates `hosts` (SPEC §2.2): each key a host pattern, each value a policy.
///
/// Refuses keys that would make the table ambiguous: two spellings of one
/// pattern (`Example.com` and `example.com.`), `**.x` next to `x` with
/// `include_subdomains` (both cover x and below), `include_subdomains` on a
/// wildcard or IP key (it means nothing there, and a reader could think it
/// widens the rule).
enum HostsSection {
    static func parse(_ value: JSONValue, at path: JSONPath,
                      into diagnostics: inout ConfigurationDiagnostics) -> [HostRule] {
        guard case .object(let members) = value.kind else {
            diagnostics.problem(path, value, "expected an object of host patterns, found \(value.typeName)")
            return []
        }
        var rules: [HostRule] = []
        rules.reserveCapacity(members.count)
        var firstByKey: [String: String] = [:]
        firstByKey.reserveCapacity(members.count)
        var firstBySubtree: [String: String] = [:]
        for member in members {
            let entryPath = path.entry(member.key)
            guard let pattern = HostPattern(member.key) else {
                diagnostics.problem(entryPath, line: member.position.line,
                                    "\"\(member.key)\" is not a host name, IP address or wildcard pattern",
                                    hint: "write api.example.com, *.example.com, **.example.com or 192.0.2.1 (A-labels for IDNs)")
                _ = PolicySection.parse(member.value, at: entryPath, isDefaultPolicy: false, into: &diagnostics)
                continue
            }
            guard let policy = PolicySection.parse(member.value, at: entryPath, isDefaultPolicy: false,
                                                   into: &diagnostics) else { continue }
            if let earlier = firstByKey[pattern.key] {
                diagnostics.problem(entryPath, line: member.position.line,
                                    "\"\(member.key)\" is the same host pattern as \"\(earlier)\"",
                                    hint: "keep one entry")
                continue
            }
            firstByKey[pattern.key] = member.key
            if policy.includeSubdomains, pattern.isWildcard || pattern.anchor.isIPAddress {
                diagnostics.problem(entryPath.key("include_subdomains"), line: member.position.line,
                                    "\"include_subdomains\" has no meaning on \"\(member.key)\"",
                                    hint: pattern.isWildcard ? "use **.\(pattern.anchor) to cover a name and all below it"
                                                             : "an IP address has no subdomains; remove it")
                continue
            }
            let coversSubtree: Bool
            switch pattern.form {
            case .subtree: coversSubtree = true
            case .exact: coversSubtree = policy.includeSubdomains
            case .oneLabelBelow: coversSubtree = false
            }
            if coversSubtree {
                if let earlier = firstBySubtree[pattern.anchor.value] {
                    diagnostics.problem(entryPath, line: member.position.line,
                                        "\"\(member.key)\" covers the same names as \"\(earlier)\"",
                                        hint: "keep one of them")
                    continue
                }
                firstBySubtree[pattern.anchor.value] = member.key
                if pattern.anchor.labels.count == 1 {
                    diagnostics.warn(entryPath, "\"\(member.key)\" covers every name under the single label "
                                     + "\"\(pattern.anchor)\" (a public suffix?)")
                }
            } else if case .oneLabelBelow = pattern.form, pattern.anchor.labels.count == 1 {
                diagnostics.warn(entryPath, "\"\(member.key)\" covers every name directly under the single label "
                                 + "\"\(pattern.anchor)\" (a public suffix?)")
            }
            if policy.learnsPins && (coversSubtree || pattern.isWildcard) {
                diagnostics.warn(entryPath.key("pins"), "\"\(member.key)\" learns one set of pins for every name it covers, "
                                 + "from the first of them: the others must be served under the same issuer or key")
            }
            rules.append(HostRule(pattern: pattern, policy: policy))
        }
        return rules
    }
}

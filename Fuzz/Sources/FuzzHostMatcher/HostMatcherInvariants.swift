import FuzzSupport
import PinproxyCore

/// The properties of host matching stated by SPEC §2.2, written plainly (by
/// labels and a linear scan) so they can check the indexed implementation.
enum HostMatcherInvariants {
    static func isNormalised(_ host: HostName) -> Bool { HostName(host.value)?.value == host.value }

    /// `host` is `suffix` or below it, on a label boundary.
    static func isAtOrBelow(_ host: HostName, _ suffix: HostName) -> Bool {
        host.value == suffix.value || host.value.hasSuffix("." + suffix.value)
    }

    static func checkMatch(_ rule: HostRule, _ host: HostName) {
        guard rule.matches(host) else { return }
        switch rule.pattern.form {
        case .exact(let name):
            Invariant.check(host == name || (rule.policy.includeSubdomains && !host.isIPAddress && isAtOrBelow(host, name)),
                            "\(rule.key) matched \(host)")
        case .oneLabelBelow(let suffix):
            Invariant.check(!host.isIPAddress && host.labels.count == suffix.labels.count + 1
                                && isAtOrBelow(host, suffix), "\(rule.key) matched \(host)")
        case .subtree(let suffix):
            Invariant.check(!host.isIPAddress && isAtOrBelow(host, suffix), "\(rule.key) matched \(host)")
        }
    }

    /// Precedence by SPEC §2.2: the first rule whose key is exactly the host;
    /// else, among matching rules, the longest anchor, `*.` before `**.` and
    /// include_subdomains at equal anchor, the first given at a tie; else the default.
    static func expectedLookup(_ rules: [HostRule], _ host: HostName) -> PolicyTable.Lookup {
        if let rule = rules.first(where: { $0.pattern.form == .exact(host) }) { return .rule(rule) }
        var best: (rule: HostRule, length: Int, rank: Int)?
        for rule in rules where rule.matches(host) {
            let length = rule.pattern.anchor.value.utf8.count
            let rank = if case .oneLabelBelow = rule.pattern.form { 1 } else { 0 }
            if let current = best, (current.length, current.rank) >= (length, rank) { continue }
            best = (rule, length, rank)
        }
        return best.map { .rule($0.rule) } ?? .deny
    }
}

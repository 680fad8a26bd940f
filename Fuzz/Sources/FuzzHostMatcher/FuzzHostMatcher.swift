import FuzzSupport
import PinproxyCore

/// libFuzzer harness over `HostName`, `HostPattern` and `PolicyTable.lookup`
/// (SPEC §2.2).
///
/// The input is lines: every line but the last is a `hosts` key (a leading
/// `+` sets `include_subdomains`), the last line is the upstream host.
/// Invariants: normalisation is idempotent and case-insensitive; a name
/// matched by `*.x` has exactly one more label than `x`, one matched by
/// `**.x` is `x` or below it; the indexed lookup agrees with a brute-force
/// reading of the precedence rules over `HostRule.matches`, and gives the same
/// answer for the upper-cased host.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostMatcher(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let lines = FuzzInput(data, size).text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let hostLine = lines.last else { return 0 }
    var rules: [HostRule] = []
    for line in lines.dropLast().prefix(16) {
        let includeSubdomains = line.hasPrefix("+")
        guard let pattern = HostPattern(includeSubdomains ? String(line.dropFirst()) : line) else { continue }
        Invariant.check(HostPattern(pattern.key) == pattern, "key \(pattern.key) does not parse back")
        Invariant.check(HostMatcherInvariants.isNormalised(pattern.anchor), "anchor \(pattern.anchor) not normalised")
        rules.append(HostRule(pattern: pattern, policy: TrustPolicy(kind: .default, includeSubdomains: includeSubdomains)))
    }
    guard let host = HostName(hostLine) else { return 0 }
    Invariant.check(HostMatcherInvariants.isNormalised(host), "\(host) not normalised")
    Invariant.check(HostName(hostLine.uppercased()) == host, "\(hostLine.debugDescription) upper-cased differs")
    for rule in rules { HostMatcherInvariants.checkMatch(rule, host) }
    let table = PolicyTable(rules: rules, defaultPolicy: .deny)
    let lookup = table.lookup(host)
    Invariant.check(lookup == HostMatcherInvariants.expectedLookup(rules, host),
                    "lookup(\(host)) = \(lookup), expected \(HostMatcherInvariants.expectedLookup(rules, host))")
    Invariant.check(table.lookup(HostName(host.value.uppercased())!) == lookup, "upper-cased lookup differs")
    return 0
}

/// The entry point SwiftPM links as `main` (see `FuzzerDriver`).
@_cdecl("FuzzHostMatcher_main")
public func fuzzHostMatcherMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzerDriver.run(argc, argv, fuzzHostMatcher)
}

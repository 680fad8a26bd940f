import Foundation
import FuzzSupport
import PinproxyCore

/// libFuzzer harness over `ConfigurationLoader.parse(text:…)`: the JSON5
/// reader and every section validator (SPEC §2).
///
/// Invariants: a configuration that validates holds only normalised host
/// names (`HostName(x)!.value == x`: rule anchors, listener and resolve
/// endpoints), rule keys that parse back to their pattern, and 32-byte pins
/// that round-trip through their canonical spelling; a refusal has at least
/// one problem, and every problem has a non-empty JSON path starting at `$`
/// and a message. Validation is a pure function of the text: a second run
/// gives the same outcome.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = FuzzInput(data, size).text
    let first = ConfigurationInvariants.check(text)
    Invariant.check(ConfigurationInvariants.check(text) == first, "two runs over the same text differ")
    return 0
}

/// The checks of one configuration text; returns a summary to compare runs.
enum ConfigurationInvariants {
    /// A fixed instant, so "expires within 30 days" warnings are deterministic.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func isNormalised(_ host: HostName) -> Bool { HostName(host.value)?.value == host.value }

    static func check(_ text: String) -> String {
        do {
            let (configuration, warnings) = try ConfigurationLoader.parse(text: text, source: "<fuzz>", environment: [:],
                                                                           cpuCount: 2, now: now)
            for rule in configuration.policies.rules {
                Invariant.check(isNormalised(rule.pattern.anchor), "rule anchor \(rule.pattern.anchor) not normalised")
                Invariant.check(rule.key == rule.pattern.key, "rule key \(rule.key) differs from its pattern")
                Invariant.check(HostPattern(rule.key) == rule.pattern, "rule key \(rule.key) does not parse back")
                for pin in rule.policy.pins {
                    Invariant.check(pin.digest.count == 32, "pin of \(pin.digest.count) bytes in \(rule.key)")
                    Invariant.check((try? SPKIPin.parse(pin.description)) == pin, "pin \(pin) does not round-trip")
                }
            }
            for listener in configuration.listeners {
                Invariant.check(isNormalised(listener.address.host), "listener \(listener.address) not normalised")
            }
            for (from, to) in configuration.resolveOverrides {
                Invariant.check(isNormalised(from.host) && isNormalised(to.host), "resolve \(from) → \(to) not normalised")
            }
            for warning in warnings {
                Invariant.check(warning.path.hasPrefix("$"), "warning path \(warning.path.debugDescription)")
            }
            return "valid: \(configuration.policies.rules.map(\.key)) \(warnings.count) warnings"
        } catch {
            Invariant.check(!error.problems.isEmpty, "refused without a problem")
            for problem in error.problems {
                Invariant.check(problem.path.hasPrefix("$"), "problem path \(problem.path.debugDescription)")
                Invariant.check(!problem.message.isEmpty, "problem without a message at \(problem.path)")
            }
            return "invalid: \(error.problems.map(\.description))"
        }
    }
}

/// The entry point SwiftPM links as `main` (see `FuzzerDriver`).
@_cdecl("FuzzConfiguration_main")
public func fuzzConfigurationMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzerDriver.run(argc, argv, fuzzConfiguration)
}

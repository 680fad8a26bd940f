import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy check`: validate a configuration the way `run` would, without
/// serving (relayd's `-n`): every problem at once, each with its JSON path
/// and a hint; then every file the policies name is loaded with OpenSSL, so
/// a garbage PEM fails here rather than at start, and the violation log is
/// opened as `run` opens it (`ViolationLogAccess`: nothing is written), so a
/// log in a missing or read-only directory fails here, not as run's exit 3.
/// Exit 0 or 1 (SPEC §1).
enum CheckCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        let path = invocation.configPath ?? Invocation.defaultConfigPath
        let environment = ProcessInfo.processInfo.environment
        let configuration: Configuration
        do {
            let (loaded, warnings) = try ConfigurationLoader.load(
                path: path, environment: environment, cpuCount: ProcessInfo.processInfo.activeProcessorCount)
            for warning in warnings { Console.error("warning: \(warning)") }
            configuration = loaded
        } catch {
            Console.error("\(error)")
            return 1
        }
        // SPEC §1: the log `run` opens at start (exit 3 when it cannot), checked with the same open.
        let log = ViolationLogAccess.check(path: configuration.violationLogPath)
        if let warning = log.warning { Console.error("warning: \(warning)") }
        if let error = log.error {
            Console.error("\(path): \(error) (`pinproxy run` would exit 3; create the directory or fix its permissions)")
        }
        let interception: InterceptionAuthority?
        do {
            let loaded = try PolicyProbe.load(configuration, configPath: path)
            for warning in loaded.fileWarnings { Console.error("warning: \(warning)") }
            interception = loaded.interception
        } catch {
            Console.error("\(path): a file the configuration names cannot be used:\n\(error)")
            return 1
        }
        guard log.error == nil else { return 1 }
        var lines = summary(of: configuration, path: path)
        var status: Int32 = 0
        if let interception {
            let uncovered = interception.scope.uncoveredRules(in: configuration.policies)
            lines += CACommand.describe(interception, configuration: configuration, uncovered: uncovered, now: Date())
            if !uncovered.isEmpty {
                // SPEC §3.1: a host outside the CA's names is a check error, never a silent widening.
                Console.error("\(path): \(uncovered.count) intercepted host\(uncovered.count == 1 ? " is" : "s are") not covered by the "
                    + "interception CA in \(interception.directory): \(uncovered.map(\.key).joined(separator: ", ")); "
                    + "run `\(InterceptionCAError.initCommand(configPath: path))` to re-issue it (clients must then trust the new root)")
                status = 1
                lines[0] = "\(path): FAILED (intercepted hosts not covered by the interception CA)"
            }
            if let expiry = CACommand.expiryWarning(interception, configPath: path, now: Date()) { Console.error("warning: \(expiry)") }
        }
        // A few thousand lines a write: one string of a 100,000-rule summary would be megabytes more to hold.
        for start in stride(from: 0, to: lines.count, by: 4096) {
            Console.print(lines[start..<min(start + 4096, lines.count)].joined(separator: "\n"))
        }
        return status
    }

    /// Listeners, hosts with their policy, pin count and expiry, the default, the log.
    static func summary(of configuration: Configuration, path: String) -> [String] {
        var lines = ["\(path): OK"]
        for listener in configuration.listeners {
            switch listener.mode {
            case .forward: lines.append("  listener \(listener.address) forward")
            case let .gateway(upstream): lines.append("  listener \(listener.address) gateway → https://\(upstream)")
            }
        }
        for rule in configuration.policies.rules {
            lines.append("  host \(rule.key): \(describe(rule.policy))")
        }
        switch configuration.policies.defaultPolicy {
        case .deny: lines.append("  default_policy: deny")
        case let .policy(policy): lines.append("  default_policy: \(describe(policy))")
        }
        for (from, to) in configuration.resolveOverrides.sorted(by: { $0.key.description < $1.key.description }) {
            lines.append("  resolve \(from) → \(to)")
        }
        lines.append("  violation log: \(configuration.violationLogPath)")
        let learning = configuration.policies.rules.filter(\.policy.learnsPins)
        if !learning.isEmpty {
            // Read with the daemon's checks already (`PolicyProbe.load`): here only counted.
            let learned = (try? LearnedPinFile(path: configuration.learnedPinsPath).read())?.rules ?? [:]
            let count = learning.filter { learned[$0.key] != nil }.count
            lines.append("  learned pins: \(configuration.learnedPinsPath) (\(count) of \(learning.count) learning rule"
                         + "\(learning.count == 1 ? "" : "s") learned; `pinproxy pins --learned` prints them)")
        }
        return lines
    }

    /// One rule's summary: the policy, what it pins, expiry, scope and mode.
    /// Appended to one string (it runs for each of 100,000 rules).
    private static func describe(_ policy: TrustPolicy) -> String {
        var text = policy.kind.rawValue
        func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        switch policy.kind {
        case .pinPublicKeys where policy.learnsPins:
            text += ", pins learned on first use"
        case .pinPublicKeys:
            text += ", " + plural(policy.pins.count + policy.publicKeyFiles.count, "pin")
            if !policy.publicKeyFiles.isEmpty { text += " (\(policy.publicKeyFiles.count) from files)" }
        case .pinCertificates:
            text += ", " + plural(policy.certificateFiles.count, "certificate file")
        case .anchors:
            text += ", " + plural(policy.anchorFiles.count, "anchor file")
        case .custom:
            if let custom = policy.customCheck {
                let cache = custom.cache == .zero ? "asked on every handshake" : "verdicts cached \(DurationSyntax.format(custom.cache))"
                text += ", command \(custom.command[0]) (timeout \(DurationSyntax.format(custom.timeout)), \(cache))"
            }
        case .default, .disable:
            break
        }
        if let expires = policy.expires {
            text += expires.hasPassed(at: Date()) ? ", pins EXPIRED \(expires) (not enforced)" : ", pins expire \(expires)"
        }
        if policy.includeSubdomains { text += ", include_subdomains" }
        if !policy.enforce { text += ", report-only" }
        return text
    }
}

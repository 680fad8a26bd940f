import Foundation
import PinproxyCore

/// `pinproxy check`: validate a configuration, print every problem at once
/// (each with its JSON path and a hint) or a summary; exit 0 or 1.
enum CheckCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        let path = invocation.configPath ?? Invocation.defaultConfigPath
        let environment = ProcessInfo.processInfo.environment
        do {
            let (configuration, warnings) = try ConfigurationLoader.load(
                path: path, environment: environment, cpuCount: ProcessInfo.processInfo.activeProcessorCount)
            for warning in warnings { print("warning: \(warning)") }
            print("\(path): OK")
            for listener in configuration.listeners {
                switch listener.mode {
                case .forward: print("  listener \(listener.address) forward")
                case let .gateway(upstream): print("  listener \(listener.address) gateway → https://\(upstream)")
                }
            }
            for rule in configuration.policies.rules {
                print("  host \(rule.key): \(rule.policy.kind.rawValue)\(rule.policy.enforce ? "" : " (report-only)")")
            }
            switch configuration.policies.defaultPolicy {
            case .deny: print("  default_policy: deny")
            case let .policy(policy): print("  default_policy: \(policy.kind.rawValue)")
            }
            print("  violation log: \(configuration.violationLogPath)")
            return 0
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
    }
}

import Foundation
import PinproxyCore

/// Which configuration a tool subcommand (`pins`, `probe`, `tail`) works
/// with: `--config FILE` (which must load), else the default path when it
/// exists, else the built-in defaults, as `pinproxy run` would (SPEC §1).
enum ConfigurationSource {
    /// The configuration, or nil after printing why it could not be loaded.
    static func load(_ invocation: Invocation) -> Configuration? {
        let environment = ProcessInfo.processInfo.environment
        let cpuCount = ProcessInfo.processInfo.activeProcessorCount
        let path = invocation.configPath ?? Invocation.defaultConfigPath
        if invocation.configPath == nil && !FileManager.default.fileExists(atPath: path) {
            return Configuration.builtInDefaults(environment: environment, cpuCount: cpuCount)
        }
        do {
            return try ConfigurationLoader.load(path: path, environment: environment, cpuCount: cpuCount).0
        } catch {
            Console.error("\(error)")
            return nil
        }
    }
}

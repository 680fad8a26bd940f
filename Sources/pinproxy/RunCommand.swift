import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy run`: load (or default) the configuration, start the daemon,
/// return its exit code.
enum RunCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let logger = Logger.shared
        if let level = invocation.logLevel {
            guard let parsed = Logger.Level(rawValue: level) else {
                logger.log(.error, "usage", "--log-level \(level): use one of error, warning, info, debug")
                return 2
            }
            logger.minimumLevel = parsed
        }
        let environment = ProcessInfo.processInfo.environment
        let cpuCount = ProcessInfo.processInfo.activeProcessorCount
        let path = invocation.configPath ?? Invocation.defaultConfigPath
        let configuration: Configuration
        var configPath: String? = path
        if invocation.configPath == nil && !FileManager.default.fileExists(atPath: path) {
            configuration = Configuration.builtInDefaults(environment: environment, cpuCount: cpuCount)
            configPath = nil
            logger.log(.info, "config", "no \(path): running on built-in defaults (forward proxy on 127.0.0.1:8080, violation log \(configuration.violationLogPath))")
        } else {
            do {
                let (loaded, warnings) = try ConfigurationLoader.load(path: path, environment: environment, cpuCount: cpuCount)
                warnings.forEach { logger.log(.warning, "config", "\($0)") }
                configuration = loaded
            } catch {
                logger.log(.error, "config", "\(error)")
                return 1
            }
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(configuration: configuration,
                                options: Daemon.Options(configPath: configPath, environment: environment, version: PinproxyVersion.string),
                                logger: logger)
        } catch {
            logger.log(.error, "daemon", "cannot start: \(error)")
            return error.exitCode
        }
        return daemon.run()
    }
}

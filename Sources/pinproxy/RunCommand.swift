import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy run`: load (or default) the configuration, start the daemon,
/// return its exit code.
enum RunCommand {
    static func execute(_ invocation: Invocation) -> Int32 {
        // First, before any thread or the configuration's load: a SIGHUP
        // during start-up must wait for the handler, not end the process.
        DaemonSignals.holdUntilHandled()
        signal(SIGPIPE, SIG_IGN)
        let logger = Logger.shared
        if let level = invocation.logLevel {
            guard let parsed = Logger.Level(rawValue: level) else {
                logger.log(.error, "usage", "--log-level \(level): use one of error, warning, info, debug")
                return 2
            }
            logger.minimumLevel = parsed
        }
        switch start(invocation, logger: logger) {
        case let .running(daemon): return daemon.run()
        case let .failed(code): return code
        }
    }

    private enum Start {
        case running(Daemon)
        case failed(exitCode: Int32)
    }

    /// Loads the configuration and builds the daemon on it. A function of its
    /// own so that the parsed `Configuration` ends here: the daemon keeps what
    /// it needs in its first generation, which a reload frees, while a local
    /// of `execute` would live as long as `run()` and hold the first file's
    /// parse for good (100,000 rules: 29.5 MB of heap in use, `malloc_stats`).
    private static func start(_ invocation: Invocation, logger: Logger) -> Start {
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
                return .failed(exitCode: 1)
            }
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(configuration: configuration,
                                options: Daemon.Options(configPath: configPath, environment: environment, version: PinproxyVersion.string),
                                logger: logger)
        } catch {
            logger.log(.error, "daemon", "cannot start: \(error)")
            return .failed(exitCode: error.exitCode)
        }
        return .running(daemon)
    }
}

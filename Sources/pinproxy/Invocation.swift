/// The parsed command line (SPEC §1). Parsing is strict: an unknown flag or a
/// missing value is a usage error (exit 2), never ignored.
struct Invocation {
    enum Command: String {
        case run, check, pins, probe, tail
    }

    var command: Command = .run
    var configPath: String?
    var logLevel: String?
    var positional: [String] = []
    var showVersion = false
    var showHelp = false

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        if let first = rest.first, let command = Command(rawValue: first) {
            self.command = command
            rest = rest.dropFirst()
        }
        while let argument = rest.first {
            rest = rest.dropFirst()
            switch argument {
            case "--version", "-V": showVersion = true
            case "--help", "-h": showHelp = true
            case "--config", "-c":
                guard let value = rest.first else { throw UsageError(description: "\(argument) needs a file path") }
                configPath = value
                rest = rest.dropFirst()
            case "--log-level":
                guard let value = rest.first else { throw UsageError(description: "--log-level needs one of error, warning, info, debug") }
                logLevel = value
                rest = rest.dropFirst()
            default:
                if argument.hasPrefix("--config=") { configPath = String(argument.dropFirst("--config=".count)); continue }
                if argument.hasPrefix("--log-level=") { logLevel = String(argument.dropFirst("--log-level=".count)); continue }
                if argument.hasPrefix("-") { throw UsageError(description: "unknown option \(argument) (see pinproxy --help)") }
                positional.append(argument)
            }
        }
        if command == .run || command == .check, let extra = positional.first {
            throw UsageError(description: "unexpected argument \(extra) (see pinproxy --help)")
        }
    }

    static let defaultConfigPath = "/etc/pinproxy/pinproxy.json"

    static let help = """
    pinproxy — certificate pinning for programs that speak plain HTTP

    usage:
      pinproxy run    [--config FILE] [--log-level LEVEL]   the daemon (the default subcommand)
      pinproxy check  [--config FILE]                       validate a config, print a summary
      pinproxy --version | --help

    --config defaults to \(defaultConfigPath); `run` without it and without that
    file runs on built-in defaults: a forward proxy on 127.0.0.1:8080.

    exit codes: 0 success, 1 validation failed, 2 usage error, 3 runtime failure
    """
}

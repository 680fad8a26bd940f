import Foundation
import PinproxyCore
import PinproxyRuntime

/// The parsed command line (SPEC §1). Parsing is strict: an unknown flag, a
/// flag of another subcommand, or a missing value is a usage error (exit 2),
/// never ignored.
struct Invocation {
    enum Command: String {
        case run, check, pins, probe, tail, ca, status
    }

    var command: Command = .run
    /// Whether the command line named the subcommand (`run --help` is run's
    /// help; a bare `--help` is the overview).
    var namesCommand = false
    var configPath: String?
    var logLevel: String?
    var positional: [String] = []
    var showVersion = false
    var showHelp = false
    /// `tail -f`: keep following the file across rotation.
    var follow = false
    /// `tail -n N`: how many of the latest matching events to print first.
    var lineCount = 10
    /// `tail --json`: the raw lines.
    var printsJSON = false
    var hostFilter: String?
    var reasonFilter: String?
    var since: String?
    /// `pins --cert FILE...`: certificate files instead of a live host.
    var certificateFiles: [String] = []
    /// `pins --learned`: the pins learning rules learned, as a `hosts` section.
    var printsLearnedPins = false
    /// `probe --chain FILE`: evaluate a chain from a file instead of connecting.
    var chainFile: String?
    /// `probe --at TIME`: the evaluation time of `--chain` (RFC 3339).
    var evaluationTime: Date?
    /// `ca init|show|export|install`.
    var caAction: CACommand.Action?

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        if let first = rest.first, let command = Command(rawValue: first) {
            self.command = command
            namesCommand = true
            rest = rest.dropFirst()
        }
        var readsCertificates = false
        func value(for flag: String, _ hint: String) throws(UsageError) -> String {
            guard let value = rest.first else { throw UsageError(description: "\(flag) needs \(hint)") }
            rest = rest.dropFirst()
            return value
        }
        while let argument = rest.first {
            rest = rest.dropFirst()
            var (flag, inline) = (argument, String?.none)
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func flagValue(_ hint: String) throws(UsageError) -> String {
                if let inline { return inline }
                return try value(for: flag, hint)
            }
            switch flag {
            case "--version", "-V": showVersion = true
            case "--help", "-h": showHelp = true
            case "--config", "-c": configPath = try flagValue("a file path")
            case "--log-level":
                try require([.run], flag)
                let level = try flagValue("one of \(CommandHelp.logLevels)")
                guard Logger.Level(rawValue: level) != nil else {
                    throw UsageError(description: "--log-level \(level): expected one of \(CommandHelp.logLevels)")
                }
                logLevel = level
            case "-f", "--follow":
                try require([.tail], flag)
                follow = true
            case "-n", "--lines":
                try require([.tail], flag)
                let text = try flagValue("a number of events")
                guard let count = Int(text), count >= 0 else {
                    throw UsageError(description: "\(flag) \(text): expected a number of events, e.g. -n 50")
                }
                lineCount = count
            case "--json":
                try require([.tail, .status], flag)
                printsJSON = true
            case "--host":
                try require([.tail], flag)
                hostFilter = try flagValue("a host pattern, e.g. api.example.com or *.example.com")
            case "--reason":
                try require([.tail], flag)
                reasonFilter = try flagValue("a reason, e.g. pin_mismatch")
            case "--since":
                try require([.tail], flag)
                since = try flagValue("a duration (10m) or an RFC 3339 time")
            case "--chain":
                try require([.probe], flag)
                chainFile = try flagValue("a PEM file: the leaf first, then what the server sends")
            case "--at":
                try require([.probe], flag)
                let text = try flagValue("an RFC 3339 time, e.g. 2027-01-15T00:00:00Z")
                guard let time = RFC3339TimestampParser.parse(text) else {
                    throw UsageError(description: "--at \(text): expected an RFC 3339 time, e.g. 2027-01-15T00:00:00Z")
                }
                evaluationTime = time
            case "--learned":
                try require([.pins], flag)
                printsLearnedPins = true
            case "--cert":
                try require([.pins], flag)
                readsCertificates = true
                if let inline { certificateFiles.append(inline) }
            default:
                if argument.hasPrefix("-") && argument != "-" {
                    throw UsageError(description: "unknown option \(argument) (see pinproxy --help)")
                }
                if readsCertificates { certificateFiles.append(argument) } else { positional.append(argument) }
            }
        }
        if showHelp || showVersion { return }
        try validateArguments(readsCertificates: readsCertificates)
    }

    /// A flag that belongs to other subcommands is refused, not ignored.
    private func require(_ commands: [Command], _ flag: String) throws(UsageError) {
        guard commands.contains(command) else {
            let owners = commands.map { "pinproxy \($0.rawValue)" }.joined(separator: ", ")
            throw UsageError(description: "\(flag) is an option of \(owners), not of pinproxy \(command.rawValue)")
        }
    }

    private mutating func validateArguments(readsCertificates: Bool) throws(UsageError) {
        switch command {
        case .run, .check, .status:
            if let extra = positional.first {
                throw UsageError(description: "unexpected argument \(extra) (see pinproxy --help)")
            }
        case .tail:
            if positional.count > 1 {
                throw UsageError(description: "pinproxy tail reads one file, got \(positional.joined(separator: " "))")
            }
        case .pins:
            if printsLearnedPins {
                if readsCertificates || !positional.isEmpty {
                    throw UsageError(description: "pins --learned takes no HOST[:PORT] or --cert: it prints what was learned")
                }
            } else if readsCertificates {
                guard !certificateFiles.isEmpty else { throw UsageError(description: "--cert needs at least one file") }
                if let extra = positional.first {
                    throw UsageError(description: "unexpected argument \(extra): give either HOST[:PORT] or --cert FILE...")
                }
            } else if positional.count != 1 {
                throw UsageError(description: "pinproxy pins needs one HOST[:PORT] or --cert FILE...")
            }
        case .ca:
            let actions = CACommand.Action.allCases.map(\.rawValue).joined(separator: "|")
            guard positional.count == 1, let action = CACommand.Action(rawValue: positional[0]) else {
                throw UsageError(description: positional.isEmpty
                    ? "pinproxy ca needs one of \(actions)"
                    : "pinproxy ca \(positional.joined(separator: " ")): expected one of \(actions)")
            }
            caAction = action
        case .probe:
            if positional.count != 1 {
                throw UsageError(description: "pinproxy probe needs one HOST[:PORT]")
            }
            if evaluationTime != nil && chainFile == nil {
                throw UsageError(description: "--at needs --chain FILE: a live probe is evaluated now")
            }
        }
    }

    static let defaultConfigPath = "/etc/pinproxy/pinproxy.json"

    static let help = """
    pinproxy — certificate pinning for programs that speak plain HTTP

    usage:
      pinproxy run    [-c FILE] [--log-level LEVEL]   the daemon (the default subcommand)
      pinproxy check  [-c FILE]                       validate a config, load its files, print a summary
      pinproxy pins   HOST[:PORT] [-c FILE]           print the SPKI pins a live host serves (not validated)
      pinproxy pins   --cert FILE...                  print the SPKI pins of certificate files
      pinproxy pins   --learned [-c FILE]             print the pins learned on first use as a hosts section
      pinproxy probe  HOST[:PORT] [-c FILE]           evaluate the configured policy against a live host
      pinproxy probe  HOST[:PORT] [-c FILE] --chain FILE [--at TIME]
                                                      the same against a PEM chain, without connecting
      pinproxy tail   [-f] [-n N] [--json] [--host PATTERN] [--reason R] [--since 10m|RFC3339] [-c FILE] [FILE|-]
                                                      print the violation log, readable
      pinproxy ca     init|show|export|install [-c FILE]
                                                      the local CA for intercepted CONNECTs (interception.ca_dir):
                                                      init creates or re-issues it for the config's hosts, show
                                                      prints its names and expiry, export prints the root (PEM),
                                                      install adds the root to the system store
      pinproxy status [--json] [-c FILE]              the running daemon's counters per listener and rule, pins
                                                      seen and never seen, leaf expiry, warnings (needs admin.listen)
      pinproxy --version | --help | COMMAND --help

    -c FILE is short for --config FILE. LEVEL is one of \(CommandHelp.logLevels) (default info).
    --config defaults to \(defaultConfigPath); `run` without it and without that
    file runs on built-in defaults: a forward proxy on 127.0.0.1:8080.
    `tail` reads FILE (- is standard input), else the config's violation_log, else the
    built-in default. `pinproxy COMMAND --help` describes one command.

    exit codes: 0 success, 1 validation failed or probe rejected, 2 usage error,
    3 runtime failure (cannot connect, cannot open the log)
    """
}

import Foundation
import PinproxyCore
import PinproxyRuntime

/// `pinproxy COMMAND --help`: one page per subcommand, naming every flag the
/// parser (`Invocation`) accepts for it and the values a flag takes, so that
/// nothing has to be learnt from an error message (SPEC §1).
enum CommandHelp {
    static let configFlag = """
      -c, --config FILE   the configuration (default \(Invocation.defaultConfigPath))
    """
    static let helpFlag = """
      -h, --help          this help
    """
    static var logLevels: String { Logger.Level.allCases.map(\.rawValue).joined(separator: ", ") }
    static var reasons: [String] { ViolationReason.allCases.map(\.rawValue) }

    /// `words` joined with ", " in lines of at most 80 columns, each indented by `indent`.
    static func wrapped(_ words: [String], indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for (index, word) in words.enumerated() {
            let piece = word + (index == words.count - 1 ? "" : ",")
            if !line.isEmpty && indent + line.count + 1 + piece.count > 80 {
                lines.append(margin + line)
                line = piece
            } else {
                line += (line.isEmpty ? "" : " ") + piece
            }
        }
        if !line.isEmpty { lines.append(margin + line) }
        return lines.joined(separator: "\n")
    }

    static func text(for command: Invocation.Command) -> String {
        switch command {
        case .run: return """
            usage: pinproxy run [-c FILE] [--log-level LEVEL]

            Runs the daemon in the foreground (the default subcommand). Without --config
            and without \(Invocation.defaultConfigPath), it runs on built-in defaults: a
            forward proxy on 127.0.0.1:8080, default_policy "default", the violation log
            $LOGS_DIRECTORY/violations.jsonl or ./violations.jsonl.

            \(configFlag)
              --log-level LEVEL   one of \(logLevels) (default info)
            \(helpFlag)

            SIGHUP reloads the configuration (a bad file keeps the old one), SIGUSR1 reopens
            the violation log, SIGTERM and SIGINT finish in-flight requests (timeouts.shutdown)
            and exit 0. Under systemd: sd_notify (READY=1, RELOADING=1, STOPPING=1, WATCHDOG=1)
            and socket activation (LISTEN_FDS, matched to listeners by address).

            exit codes: 0 stopped after a drain, 1 the configuration is invalid or a file it
            names is unusable, 2 usage error, 3 cannot bind, cannot open the violation log,
            or an inherited socket matches no listener
            """
        case .check: return """
            usage: pinproxy check [-c FILE]

            Validates a configuration as `run` would, without serving: every problem with its
            file, line and JSON path; then loads every file it names (trust store, pins,
            certificates, anchors, CRLs, client keys, the interception CA) and opens the
            violation log without writing to it. Prints a summary when it passes.

            \(configFlag)
            \(helpFlag)

            exit codes: 0 valid (warnings go to stderr), 1 problems found, 2 usage error
            """
        case .pins: return """
            usage: pinproxy pins HOST[:PORT] [-c FILE]
                   pinproxy pins --cert FILE...

            Prints the subject, issuer, expiry and sha256/ SPKI pin of every certificate a
            live host serves (PORT defaults to 443; the config's resolve entries are used), or
            of certificate files (PEM bundles or DER), then a ready-to-paste hosts entry.
            It does not validate the chain: check it before you trust the pins.

            \(configFlag)
              --cert FILE...      read certificate files instead of connecting
            \(helpFlag)

            exit codes: 0 printed, 1 the configuration or a file is unusable, 2 usage error,
            3 the host could not be reached
            """
        case .probe: return """
            usage: pinproxy probe HOST[:PORT] [-c FILE]
                   pinproxy probe HOST[:PORT] [-c FILE] --chain FILE [--at TIME]

            Evaluates the configured policy for HOST exactly as the daemon would (same
            resolve entries, same rule lookup, same checks inside the handshake) and prints
            the verdict, the rule, the served chain and its pins.

            \(configFlag)
              --chain FILE        evaluate this PEM chain (leaf first) instead of connecting
              --at TIME           with --chain: evaluate at this RFC 3339 time (default now)
            \(helpFlag)

            exit codes: 0 accepted (also report-only), 1 rejected, denied by default_policy, or
            the configuration is unusable, 2 usage error, 3 no verdict (connection failed,
            chain file unreadable)
            """
        case .tail: return """
            usage: pinproxy tail [-f] [-n N] [--json] [--host PATTERN] [--reason REASON]
                                 [--since DURATION|TIME] [-c FILE] [FILE|-]

            Prints the violation log as one readable line per event. Reads FILE, or standard
            input for -, else the configuration's violation_log. Rotated .gz files (and gzip
            on standard input) are decompressed. Colour only on a terminal, and never when
            NO_COLOR is set to a non-empty value.

              -f, --follow        keep printing new events, across rotation by rename (like
                                  tail -F); waits for a file that does not exist yet; with
                                  -, prints each event as it arrives until end of input
              -n, --lines N       first print the last N matching events (default 10)
              --json              print the raw JSON lines
              --host PATTERN      only events for hosts matching PATTERN (a hosts key:
                                  api.example.com, *.example.com, **.example.com)
              --reason REASON     only events with this reason, one of:
            \(wrapped(reasons, indent: 22))
              --since T           only events since a duration ago (90s, 10m, 2h) or an
                                  RFC 3339 time (2026-11-30T17:00:00Z)
            \(configFlag)
            \(helpFlag)

            exit codes: 0 done, 1 the configuration is unusable, 2 usage error, 3 the file
            cannot be read
            """
        case .ca: return """
            usage: pinproxy ca init|show|export|install [-c FILE]

            The local CA that intercepted CONNECTs are served under (interception.ca_dir).
              init      creates the CA, or re-issues it for the configuration's hosts
              show      prints its names and expiry
              export    prints the root certificate (PEM) clients must trust
              install   adds the root to the system store (update-ca-certificates) and
                        prints how to reach runtimes with their own stores

            \(configFlag)
            \(helpFlag)

            exit codes: 0 done, 1 the configuration or the CA is not usable, 2 usage error,
            3 a file cannot be written or a command failed
            """
        case .status: return """
            usage: pinproxy status [--json] [-c FILE]

            What the running daemon reports on its admin listener (admin.listen, GET /status):
            per listener its connections, answers by status class, CONNECT outcomes and
            denied requests; per rule its requests, blocked and reported violations, upstream
            handshakes, the pins seen and never seen and the last verified leaf's expiry; and
            the warnings to act on (pins or the CA near expiry, a stale CRL, a leaf whose own
            key is the only pin that matched and that is due for renewal).
              --json              print the status document as served
            \(configFlag)
            \(helpFlag)

            exit codes: 0 done, 1 the configuration has no admin listener, 2 usage error,
            3 the daemon cannot be reached
            """
        }
    }
}

import Foundation
import Testing
@testable import PinproxyRuntime

/// `pinproxy COMMAND --help` (SPEC §1): each subcommand's own help on
/// stdout, exit 0, naming every flag the command accepts, and every flag it
/// names really accepted by that command.
@Suite("pinproxy COMMAND --help")
struct CommandHelpTests {
    /// Each subcommand, the flags it accepts, and a value for those that need one.
    static let commands: [(command: String, flags: [(flag: String, value: String?)])] = [
        ("run", [("-c", "x.json"), ("--config", "x.json"), ("--log-level", "debug")]),
        ("check", [("-c", "x.json"), ("--config", "x.json")]),
        ("pins", [("-c", "x.json"), ("--config", "x.json"), ("--cert", "a.pem")]),
        ("probe", [("-c", "x.json"), ("--config", "x.json"), ("--chain", "c.pem"), ("--at", "2027-01-15T00:00:00Z")]),
        ("tail", [("-c", "x.json"), ("--config", "x.json"), ("-f", nil), ("--follow", nil), ("-n", "5"), ("--lines", "5"),
                  ("--json", nil), ("--host", "*.example.com"), ("--reason", "pin_mismatch"), ("--since", "10m")]),
        ("ca", [("-c", "x.json"), ("--config", "x.json")]),
    ]

    @Test("COMMAND --help and -h print that command's usage and exit 0", arguments: commands.map(\.command), ["--help", "-h"])
    func ownHelp(command: String, flag: String) throws {
        let result = try PinproxyBinary.run([command, flag])
        #expect(result.status == 0)
        #expect(result.errorOutput == "")
        #expect(result.output.hasPrefix("usage: pinproxy \(command) "), "\(result.output)")
        let flags = try #require(Self.commands.first { $0.command == command }).flags
        for (documented, _) in flags {
            #expect(result.output.contains(documented + " ") || result.output.contains(documented + ","),
                    "\(command) --help does not document \(documented):\n\(result.output)")
        }
    }

    @Test("every documented flag is accepted by its command", arguments: commands.map(\.command))
    func documentedFlagsParse(command: String) throws {
        for (flag, value) in try #require(Self.commands.first { $0.command == command }).flags {
            // --help ends parsing before the arguments are validated, so a flag alone is tested.
            let result = try PinproxyBinary.run([command, flag] + (value.map { [$0] } ?? []) + ["--help"])
            #expect(result.status == 0, "\(command) \(flag): \(result.errorOutput)")
        }
    }

    @Test("run --help lists every --log-level value, and another value is a usage error naming them")
    func logLevels() throws {
        let help = try PinproxyBinary.run(["run", "--help"])
        let values = Logger.Level.allCases.map(\.rawValue)
        #expect(help.output.contains("--log-level LEVEL   one of \(values.joined(separator: ", ")) (default info)"), "\(help.output)")
        let wrong = try PinproxyBinary.run(["run", "--log-level", "loud"])
        #expect(wrong.status == 2)
        #expect(wrong.errorOutput == "pinproxy: --log-level loud: expected one of \(values.joined(separator: ", "))\n")
    }

    @Test("a bare --help is the overview of every command")
    func overview() throws {
        let result = try PinproxyBinary.run(["--help"])
        #expect(result.status == 0)
        for command in Self.commands.map(\.command) {
            #expect(result.output.contains("pinproxy \(command) "), "\(command) missing:\n\(result.output)")
        }
        #expect(result.output.contains("COMMAND --help"))
    }
}

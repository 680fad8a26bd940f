import Foundation
import Testing

/// The shipped unit files and example config, checked with the tools an
/// operator has: `systemd-analyze` and `pinproxy check` (SPEC §5).
@Suite("systemd units and the installed example config")
struct SystemdUnitFileTests {
    @Test("systemd-analyze verify prints nothing for both units and the check script passes")
    func unitsVerify() throws {
        let result = try ChildProcess.run("/bin/sh", ["Tests/Tools/check-systemd-units.sh"], options: .inRepository, timeout: 120)
        #expect(result.status == 0, "stdout:\n\(result.output)\nstderr:\n\(result.errorOutput)")
        #expect(result.errorOutput.isEmpty)
        #expect(result.output.hasSuffix("units OK\n"))
    }

    @Test("systemd-analyze security --offline rates the service at exposure 1.5 or better")
    func securityExposure() throws {
        let result = try ChildProcess.run("/usr/bin/systemd-analyze",
                                          ["security", "--offline=true", "--threshold=15", "systemd/pinproxy.service"],
                                          options: .inRepository, timeout: 120)
        #expect(result.status == 0, "\(result.output)\(result.errorOutput)")
        let exposure = try #require(Self.overallExposure(result.output + result.errorOutput))
        print("pinproxy.service: systemd-analyze security exposure \(exposure)")
        #expect(exposure <= 1.5)
    }

    @Test("the unit's system-call filter gives back setpriority, after denying @resources: the reload thread's nice 19")
    func filterAllowsSetpriority() throws {
        // With SystemCallErrorNumber=EPERM a denied setpriority fails silently
        // and reloads build at the loops' priority; systemd applies the lines
        // in order, so the allow must follow the deny.
        let filters = contents(of: ToolPaths.repositoryRoot + "/systemd/pinproxy.service")
            .split(separator: "\n").filter { $0.hasPrefix("SystemCallFilter=") }
        let deny = try #require(filters.firstIndex(of: "SystemCallFilter=~@privileged @resources"))
        let allow = try #require(filters.firstIndex(of: "SystemCallFilter=setpriority"))
        #expect(allow > deny)
    }

    @Test("the example config as installed passes pinproxy check (the unit's ExecStartPre=)")
    func exampleConfigChecks() throws {
        // `check` opens the violation log's directory as `run` does; under the
        // unit, LogsDirectory=pinproxy has made /var/log/pinproxy before
        // ExecStartPre=. Here a temporary directory stands in for it, and the
        // rest of the shipped file is checked as it is.
        let logs = try TemporaryDirectory()
        let shipped = contents(of: ToolPaths.repositoryRoot + "/etc/pinproxy/pinproxy.json")
        #expect(shipped.components(separatedBy: "\"/var/log/pinproxy/violations.jsonl\"").count == 2)
        let file = try logs.write(shipped.replacingOccurrences(of: "\"/var/log/pinproxy/", with: "\"\(logs.path)/"),
                                  to: "pinproxy.json")
        let result = try ChildProcess.run(PinproxyBinary.path, ["check", "--config", file],
                                          options: .inRepository, timeout: 120)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.errorOutput.isEmpty)
        #expect(result.output.hasPrefix("\(file): OK\n"))
        // No warnings: no single-pin sets and no "disable" policy in what ships.
        #expect(!result.output.contains("warning:"))
        #expect(result.output.contains("  default_policy: default\n"))
    }

    /// The number in "Overall exposure level for pinproxy.service: 1.1 OK".
    static func overallExposure(_ report: String) -> Double? {
        guard let line = report.split(separator: "\n").first(where: { $0.contains("Overall exposure level") }),
              let colon = line.lastIndex(of: ":") else { return nil }
        return line[line.index(after: colon)...].split(separator: " ").first.flatMap { Double($0) }
    }
}

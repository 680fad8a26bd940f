import Foundation
import Testing

/// The shipped unit files and example config, checked with the tools an
/// operator has: `systemd-analyze` and `pinproxy check` (SPEC §5).
@Suite("systemd units and the installed example config")
struct SystemdUnitFileTests {
    @Test("systemd-analyze verify prints nothing for both units and the check script passes")
    func unitsVerify() throws {
        let result = try ToolCommand.run("/bin/sh", ["Tests/Tools/check-systemd-units.sh"])
        #expect(result.status == 0, "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasSuffix("units OK\n"))
    }

    @Test("systemd-analyze security --offline rates the service at exposure 1.5 or better")
    func securityExposure() throws {
        let result = try ToolCommand.run("/usr/bin/systemd-analyze",
                                         ["security", "--offline=true", "--threshold=15", "systemd/pinproxy.service"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let exposure = try #require(Self.overallExposure(result.stdout + result.stderr))
        print("pinproxy.service: systemd-analyze security exposure \(exposure)")
        #expect(exposure <= 1.5)
    }

    @Test("the example config as installed passes pinproxy check (the unit's ExecStartPre=)")
    func exampleConfigChecks() throws {
        let result = try ToolCommand.run(ServiceProcess.binary, ["check", "--config", "etc/pinproxy/pinproxy.json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasPrefix("etc/pinproxy/pinproxy.json: OK\n"))
        // No warnings: no single-pin sets and no "disable" policy in what ships.
        #expect(!result.stdout.contains("warning:"))
        #expect(result.stdout.contains("  default_policy: default\n"))
    }

    /// The number in "Overall exposure level for pinproxy.service: 1.1 OK".
    static func overallExposure(_ report: String) -> Double? {
        guard let line = report.split(separator: "\n").first(where: { $0.contains("Overall exposure level") }),
              let colon = line.lastIndex(of: ":") else { return nil }
        return line[line.index(after: colon)...].split(separator: " ").first.flatMap { Double($0) }
    }
}

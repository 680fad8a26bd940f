import Foundation
import Testing
@testable import PinproxyCore

/// SPEC §2.1 `policy: "custom"`: what a custom rule must say and what is
/// refused. The command decides trust, so everything that would let it be
/// swapped, or run through a shell or a search path, is an error, never a
/// warning.
@Suite("custom policy configuration")
struct CustomPolicyConfigurationTests {
    /// A fixture with an executable `check` (0755) in a directory only its owner writes.
    static func fixture(mode: mode_t = 0o755) throws -> ConfigurationFixture {
        let fixture = try ConfigurationFixture()
        chmod(fixture.directory, 0o755)
        try Data("#!/bin/sh\nexit 0\n".utf8).write(to: URL(fileURLWithPath: fixture.path("check")))
        chmod(fixture.path("check"), mode)
        return fixture
    }

    static func rule(_ members: String) -> String {
        #"{ "hosts": { "pay.example.com": { "policy": "custom", \#(members) } } }"#
    }

    @Test("command, timeout and cache are read; the defaults are 2s and 10m; \"0s\" asks every time")
    func accepted() throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let (configuration, _) = try fixture.parse(Self.rule(#""command": ["@check", "--strict", ""]"#))
        let settings = try #require(configuration.policies.rules.first?.policy.customCheck)
        #expect(settings.command == [fixture.path("check"), "--strict", ""])
        #expect(settings.timeout == .seconds(2))
        #expect(settings.cache == .seconds(600))
        let (tuned, _) = try fixture.parse(Self.rule(#""command": ["@check"], "timeout": "250ms", "cache": "0s""#))
        #expect(tuned.policies.rules.first?.policy.customCheck?.timeout == .milliseconds(250))
        #expect(tuned.policies.rules.first?.policy.customCheck?.cache == .zero)
        #expect(tuned.limits.customChecks == 16)
    }

    @Test("refused, each at its JSON path", arguments: [
        (#""timeout": "2s""#, #"$.hosts["pay.example.com"]"#, #"needs a "command""#),
        (#""command": []"#, #"$.hosts["pay.example.com"].command"#, "is empty"),
        (#""command": "@check""#, #"$.hosts["pay.example.com"].command"#, "expected an array of strings"),
        (#""command": ["check"]"#, #"$.hosts["pay.example.com"].command[0]"#, "is not an absolute path"),
        (#""command": ["@missing"]"#, #"$.hosts["pay.example.com"].command[0]"#, "No such file or directory"),
        (#""command": ["@"]"#, #"$.hosts["pay.example.com"].command[0]"#, "is not a regular file"),
        (#""command": ["@check", 5]"#, #"$.hosts["pay.example.com"].command[1]"#, "expected a string"),
        (#""command": ["@check", "a\u0000b"]"#, #"$.hosts["pay.example.com"].command[1]"#, "NUL"),
        (#""command": ["@check"], "timeout": "0s""#, #"$.hosts["pay.example.com"].timeout"#, "not a positive duration"),
        (#""command": ["@check"], "timeout": 2"#, #"$.hosts["pay.example.com"].timeout"#, "expected a duration string"),
        (#""command": ["@check"], "timeout": "2m""#, #"$.hosts["pay.example.com"].timeout"#, "longer than the most allowed, 1m"),
        (#""command": ["@check"], "cache": "2d""#, #"$.hosts["pay.example.com"].cache"#, "not a positive duration"),
        (#""command": ["@check"], "cache": "25h""#, #"$.hosts["pay.example.com"].cache"#, "longer than the most allowed, 24h"),
        (#""command": ["@check"], "pins": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]"#,
         #"$.hosts["pay.example.com"].pins"#, #"does not apply to policy "custom""#),
    ])
    func refused(_ members: String, _ path: String, _ message: String) throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let problems = fixture.problems(Self.rule(members))
        #expect(problems.contains { $0.path == path && "\($0)".contains(message) }, "\(problems.map { "\($0)" })")
    }

    @Test("a command others may replace is refused: not executable, writable by others, or in a directory others write")
    func untrustedCommand() throws {
        for (mode, message) in [(mode_t(0o644), "is not executable"), (0o757, "is writable by others")] {
            let fixture = try Self.fixture(mode: mode)
            defer { fixture.remove() }
            let problems = fixture.problems(Self.rule(#""command": ["@check"]"#))
            #expect(problems.contains { "\($0)".contains(message) }, "\(problems.map { "\($0)" })")
        }
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        chmod(fixture.directory, 0o777)
        let problems = fixture.problems(Self.rule(#""command": ["@check"]"#))
        #expect(problems.contains { "\($0)".contains("directory of custom command") && "\($0)".contains("writable by others") },
                "\(problems.map { "\($0)" })")
    }

    @Test("a timeout as long as timeouts.handshake is a warning: the handshake would end before the answer")
    func timeoutAgainstHandshake() throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let (_, warnings) = try fixture.parse(#"{ "timeouts": { "handshake": "5s" }, "#
            + #""hosts": { "pay.example.com": { "policy": "custom", "command": ["@check"], "timeout": "5s" } } }"#)
        #expect(warnings.contains { $0.path == #"$.hosts["pay.example.com"].timeout"#
            && $0.message.contains("not shorter than timeouts.handshake 5s") }, "\(warnings)")
        let (_, quiet) = try fixture.parse(Self.rule(#""command": ["@check"], "timeout": "9s""#))
        #expect(!quiet.contains { $0.message.contains("timeouts.handshake") })
    }

    @Test("command, timeout and cache belong to custom only")
    func keysOfCustomOnly() throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let problems = fixture.problems(#"{ "hosts": { "a.example": { "policy": "default", "command": ["@check"] } } }"#)
        #expect(problems.contains { "\($0)".contains(#""command" does not apply to policy "default""#) && "\($0)".contains(#""custom""#) })
    }

    @Test("limits.custom_checks is 1…1024")
    func childLimit() throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let (configuration, _) = try fixture.parse(#"{ "limits": { "custom_checks": 4 } }"#)
        #expect(configuration.limits.customChecks == 4)
        for value in ["0", "1025", "\"4\""] {
            #expect(!fixture.problems(#"{ "limits": { "custom_checks": \#(value) } }"#).isEmpty, "custom_checks \(value)")
        }
    }
}

import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §2.1 `"pins": "learn"` on the real binary, as systemd runs it with
/// `STATE_DIRECTORY`: learned pins survive a restart and a reload, deleting an
/// entry and sending SIGHUP re-arms learning, a learned-pins file that cannot
/// be trusted refuses the start, and `pins --learned` / `probe` read it.
@Suite("Learned pins on the binary: restart, reload, refusal, pins --learned", .serialized)
struct LearnedPinsDaemonTests {
    /// The world's daemon, started with the bed's state directory.
    static func start(_ world: TestWorld, _ bed: LearningBed) throws -> ChildProcess {
        try world.startDaemon(.init(signalMask: .clean, environment: bed.environment))
    }

    static func get(_ world: TestWorld, _ url: String) throws -> Curl.Result {
        try Curl.run(world.proxyArguments + [url], timeout: 15)
    }

    /// The violation log's lines, parsed.
    static func violations(_ world: TestWorld) -> [[String: Any]] {
        contents(of: world.configuration.violationLog).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Runs the daemon on the real server until it has learned, then stops it (SIGTERM, exit 0).
    static func learnFromRealServer(_ world: TestWorld, _ bed: LearningBed) throws {
        try world.startUpstream()
        let daemon = try start(world, bed)
        #expect(try get(world, "http://api.example.com/bytes/10").status == 200)
        #expect(try bed.waitForLearned()?.pins.map(\.description) == LearningBed.pins(of: bed.real))
        #expect(daemon.stderrText.contains("learned-pins: api.example.com: learned "), "stderr:\n\(daemon.stderrText)")
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }

    @Test("after a restart a MITM whose CA the store trusts is blocked against the learned pins (502, pin_mismatch, those known_pins logged); the real server is relayed")
    func restartKeepsLearnedPins() throws {
        let bed = try LearningBed()
        let world = try bed.world()
        try Self.learnFromRealServer(world, bed)
        #expect(LearningBed.mode(of: bed.file) == 0o600)

        let attacker = try bed.startAttacker(in: world)
        try world.startUpstream(resolving: ["api.example.com:8443"])
        let daemon = try Self.start(world, bed)
        let blocked = try Self.get(world, "http://api.example.com/bytes/10")
        #expect(blocked.status == 502)
        #expect(blocked.header("proxy-status") == E2EVerdict.proxyStatus("tls_certificate_error", details: "pin_mismatch"))
        let line = try #require(Self.violations(world).first)
        #expect(line["reason"] as? String == "pin_mismatch")
        #expect(line["rule"] as? String == LearningBed.rule)
        #expect(line["policy"] as? String == "pin-public-keys")
        #expect(line["known_pins"] as? [String] == LearningBed.pins(of: bed.real))
        E2EVerdict.expectNothingRelayed(attacker.waitForConnections(1))
        #expect(try Self.get(world, "http://api.example.com:8443/bytes/10").status == 200)
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }

    @Test("a reload keeps what was learned; deleting the host's entry and sending SIGHUP re-arms learning for it")
    func deletingTheEntryAndReloadingRearms() throws {
        let bed = try LearningBed()
        let world = try bed.world()
        try world.startUpstream()
        let daemon = try Self.start(world, bed)
        #expect(try Self.get(world, "http://api.example.com/bytes/10").status == 200)
        _ = try bed.waitForLearned()

        // The MITM takes over the address; the reload re-reads the file and keeps the real server's pins.
        try bed.startAttacker(in: world)
        try world.writeConfiguration()
        daemon.send(SIGHUP)
        try daemon.waitForStderr(containing: "configuration generation 2 active")
        let blocked = try Self.get(world, "http://api.example.com/bytes/10")
        #expect(blocked.status == 502)
        #expect(Self.violations(world).first?["known_pins"] as? [String] == LearningBed.pins(of: bed.real))

        // An operator deletes the entry (as an editor would: a new file, mode 0600) and reloads.
        let file = try #require(Optional(LearnedPinFile(path: bed.file)))
        try file.write(LearnedPinsDocument())
        daemon.send(SIGHUP)
        try daemon.waitForStderr(containing: "configuration generation 3 active")
        #expect(try Self.get(world, "http://api.example.com/bytes/10").status == 200)
        #expect(try bed.waitForLearned()?.pins.map(\.description) == LearningBed.pins(of: bed.attacker))
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }

    /// A learned-pins file pinproxy must not trust.
    enum Untrusted: String, CaseIterable, Sendable {
        case malformed, worldWritable, groupWritable

        func make(at path: String) throws -> String {
            let pins = #"["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]"#
            switch self {
            case .malformed:
                try #"{ "version": 1, "rules": { "api.example.com": { "pins": "#.write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, 0o600)
                return "is not a valid learned-pins file"
            case .worldWritable, .groupWritable:
                try #"{ "version": 1, "rules": { "api.example.com": { "pins": \#(pins) } } }"#
                    .write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, self == .worldWritable ? 0o606 : 0o660)
                return "run `chmod 600 \(path)`"
            }
        }
    }

    @Test("a learned-pins file that is malformed or that others can write refuses the start (and check), naming the file",
          arguments: Untrusted.allCases)
    func untrustedFileRefusesStart(untrusted: Untrusted) throws {
        let bed = try LearningBed()
        let world = try bed.world()
        let phrase = try untrusted.make(at: bed.file)
        let config = try world.writeConfiguration()
        let run = try PinproxyBinary.run(["run", "--config", config], environment: bed.environment)
        #expect(run.status == 1)
        #expect(run.errorOutput.contains("cannot start"), "stderr:\n\(run.errorOutput)")
        #expect(run.errorOutput.contains(bed.file))
        #expect(run.errorOutput.contains(phrase), "stderr:\n\(run.errorOutput)")
        #expect(!run.errorOutput.contains("listening on"))
        let check = try PinproxyBinary.run(["check", "--config", config], environment: bed.environment)
        #expect(check.status == 1)
        #expect(check.errorOutput.contains(bed.file) && check.errorOutput.contains(phrase), "stderr:\n\(check.errorOutput)")
    }

    @Test("pins --learned prints a hosts section that check accepts and that pins the learned keys")
    func printedSectionIsConfiguration() throws {
        let bed = try LearningBed()
        let world = try bed.world()
        try Self.learnFromRealServer(world, bed)
        let config = try world.writeConfiguration()
        let printed = try PinproxyBinary.run(["pins", "--learned", "--config", config], environment: bed.environment)
        #expect(printed.status == 0, "stderr:\n\(printed.errorOutput)")
        #expect(printed.output.contains("// Pins learned on first use, from \(bed.file)."))
        let fragment = try world.directory.write(printed.output, to: "learned-hosts.json")
        let check = try PinproxyBinary.run(["check", "--config", fragment])
        #expect(check.status == 0, "stderr:\n\(check.errorOutput)")
        #expect(check.output.contains("  host api.example.com: pin-public-keys, 2 pins"))
        let (loaded, _) = try ConfigurationLoader.parse(text: printed.output, source: fragment, environment: [:], cpuCount: 1)
        #expect(loaded.policies.rules.map(\.key) == [LearningBed.rule])
        #expect(loaded.policies.rules.first?.policy.pins.map(\.description) == LearningBed.pins(of: bed.real))
        #expect(loaded.policies.rules.first?.policy.learnsPins == false)
    }

    @Test("probe of a rule that has learned nothing says what the daemon would learn, and learns nothing itself")
    func probeLearnsNothing() throws {
        let bed = try LearningBed()
        let world = try bed.world()
        try world.startUpstream()
        let probe = try PinproxyBinary.run(["probe", "api.example.com", "--config", try world.writeConfiguration()],
                                           environment: bed.environment)
        #expect(probe.status == 0, "stderr:\n\(probe.errorOutput)")
        #expect(probe.output.contains("no pins learned yet"), "stdout:\n\(probe.output)")
        #expect(!FileManager.default.fileExists(atPath: bed.file))
    }
}

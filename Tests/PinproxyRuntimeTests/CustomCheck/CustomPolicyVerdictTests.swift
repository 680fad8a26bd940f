import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §2.1 `custom` against a real TLS server and real shell-script
/// checkers: what the command is given, and every way it can answer. Every
/// rejected server must have received zero application bytes.
@Suite("custom policy: the command's verdicts", .serialized)
struct CustomPolicyVerdictTests {
    /// A scenario whose api.example.com rule runs `checker` (built in the scenario's directory).
    static func scenario(_ makeChecker: (TemporaryDirectory) throws -> CustomChecker, extra: String = "",
                         policyExtra: String = "", chain: TestPKI.Chain? = nil) throws -> (E2EScenario, CustomChecker) {
        let directory = try TemporaryDirectory()
        let checker = try makeChecker(directory)
        let config = #""hosts": { \#(checker.rule(extra: policyExtra)) },"# + CustomChecker.freshHandshakes + extra
        let scenario = try E2EScenario(directory: directory, chain: chain ?? TestPKI.chain(), config: config)
        return (scenario, checker)
    }

    @Test("exit 0 accepts: the response is relayed, and the command read the served chain as PEM, leaf first, with the facts in an environment of its own")
    func acceptsWithFacts() throws {
        let chain = try TestPKI.chain()
        let (scenario, checker) = try Self.scenario({ try CustomChecker.accepting(in: $0) }, chain: chain)
        let result = try scenario.get("/bytes/100")
        #expect(result.status == 200)
        #expect(result.body == Data((0..<100).map { UInt8($0) }))
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
        let runs = checker.callStarts
        try #require(runs.count == 1)
        let environment = checker.environment(of: runs[0].pid)
        #expect(environment["PINPROXY_HOST"] == "api.example.com")
        #expect(environment["PINPROXY_PORT"] == "443")
        #expect(environment["PINPROXY_RULE"] == "api.example.com")
        #expect(environment["PINPROXY_PEER_ADDRESS"] == "127.0.0.1:\(scenario.upstream.port)")
        // The verified chain: leaf, intermediate, root (the anchor), as SHA-256 hex.
        let expected = [chain.leaf.certificate, chain.intermediate.certificate, chain.root.certificate]
            .map { $0.facts.certificateSHA256.map { String(format: "%02x", $0) }.joined() }
        #expect(environment["PINPROXY_VERIFIED_CHAIN_SHA256"] == expected.joined(separator: " "))
        // Nothing of the daemon's (or the test runner's) environment is passed on.
        let shellOwn: Set = ["PWD", "SHLVL", "_", "OLDPWD"]
        #expect(Set(environment.keys).subtracting(shellOwn) == ["PATH", "PINPROXY_HOST", "PINPROXY_PORT", "PINPROXY_RULE",
                                                                  "PINPROXY_PEER_ADDRESS", "PINPROXY_VERIFIED_CHAIN_SHA256"])
        let served = chain.served.map { PEMCertificate.encode(der: $0.facts.der) }.joined()
        #expect(checker.input(of: runs[0].pid) == served)
    }

    @Test("exit 1 rejects with custom_rejected: 502, the first line of output (escaped, at most 200 bytes) is the event's detail, tail shows the reason, and the server got no application byte")
    func rejects() throws {
        let long = String(repeating: "x", count: 300)
        let (scenario, _) = try Self.scenario {
            try CustomChecker(in: $0, body: #"cat >/dev/null; printf 'serial not in inventory\033[31m\t\#(long)\nsecond line\n'; exit 1"#)
        }
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .customRejected, rule: "api.example.com", policy: .custom, proxy: scenario.proxy)
        // 200 bytes of the line as written: 29 before the x's (ESC and TAB one byte each), then 171 x's.
        let expected = "serial not in inventory\\x1b[31m\\x09" + String(repeating: "x", count: 200 - 29)
        #expect(scenario.proxy.sink.events.first?.detail == expected)
        #expect(scenario.proxy.logLines().first?["detail"] as? String == expected)
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        let tail = try PinproxyBinary.run(["tail", "--reason", "custom_rejected", scenario.proxy.logPath])
        #expect(tail.status == 0)
        #expect(tail.output.contains("custom_rejected"))
        #expect(tail.output.contains("api.example.com:443"))
    }

    @Test("any other ending fails closed with custom_failed, and the server gets no application byte",
          arguments: [
            ("exit 2", #"cat >/dev/null; echo 'inventory unreachable'; exit 2"#, "exited with status 2: inventory unreachable"),
            ("a signal", #"cat >/dev/null; kill -KILL $$"#, "killed by signal 9"),
            ("exit 126", #"cat >/dev/null; exit 126"#, "exited with status 126"),
          ])
    func failsClosed(_ name: String, _ body: String, _ detail: String) throws {
        let (scenario, _) = try Self.scenario { try CustomChecker(in: $0, body: body) }
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .customFailed, rule: "api.example.com", policy: .custom, proxy: scenario.proxy)
        let logged = scenario.proxy.sink.events.first?.detail ?? ""
        #expect(logged.contains(detail), "\(name): \(logged)")
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("a command that can no longer be started (removed after the configuration was loaded) fails closed with custom_failed")
    func cannotStart() throws {
        let (scenario, checker) = try Self.scenario { try CustomChecker.accepting(in: $0) }
        try FileManager.default.removeItem(atPath: checker.path)
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .customFailed, rule: "api.example.com", policy: .custom, proxy: scenario.proxy)
        let logged = scenario.proxy.sink.events.first?.detail ?? ""
        #expect(logged.hasPrefix("cannot start \(checker.path): No such file or directory"), "\(logged)")
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
    }

    @Test("a command that sleeps past its timeout is killed with its whole process group, and the chain rejected as custom_failed within the timeout")
    func timesOut() throws {
        let (scenario, checker) = try Self.scenario({
            try CustomChecker(in: $0, body: #"sleep 30 & echo $! > "$STATE/sleeper"; wait"#)
        }, policyExtra: #""timeout": "500ms","#)
        let clock = ContinuousClock()
        let started = clock.now
        let result = try scenario.get()
        let elapsed = clock.now - started
        E2EVerdict.expectBlocked(result, reason: .customFailed, rule: "api.example.com", policy: .custom, proxy: scenario.proxy)
        #expect(scenario.proxy.sink.events.first?.detail == "the custom command timed out after 500ms")
        #expect(elapsed >= .milliseconds(500) && elapsed < .seconds(3), "took \(elapsed)")
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(1))
        let sleeper = Int32(contents(of: checker.directory + "/sleeper").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(sleeper > 0)
        #expect(eventually(timeout: 5) { kill(sleeper, 0) != 0 }, "the command's background child \(sleeper) outlived it")
    }

    @Test("a command that writes 1 MiB to standard output does not stall: exit 0 still accepts")
    func chattyCommand() throws {
        let (scenario, _) = try Self.scenario {
            try CustomChecker(in: $0, body: #"cat >/dev/null; head -c 1048576 /dev/zero | tr '\0' 'a'; exit 0"#)
        }
        let result = try scenario.get("/bytes/10")
        #expect(result.status == 200)
        E2EVerdict.expectNoEvent(proxy: scenario.proxy)
    }

    @Test("a command that never reads its input still decides by its exit status", arguments: [0, 1])
    func neverReadsInput(_ status: Int) throws {
        let (scenario, _) = try Self.scenario { try CustomChecker(in: $0, body: "exit \(status)") }
        let result = try scenario.get("/bytes/10")
        if status == 0 {
            #expect(result.status == 200)
        } else {
            E2EVerdict.expectBlocked(result, reason: .customRejected, rule: "api.example.com", policy: .custom,
                                     proxy: scenario.proxy)
            #expect(scenario.proxy.sink.events.first?.detail == "the custom command rejected the chain")
        }
    }

    @Test("a chain that fails validation never reaches the command: chain_untrusted, and the command is not run")
    func validationFirst() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker.accepting(in: directory)
        let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
        let scenario = try E2EScenario(directory: directory, chain: TestPKI.chain(rootName: "Unknown Root CA"),
                                       trusting: [trusted.root.certificate],
                                       config: #""hosts": { \#(checker.rule()) },"# + CustomChecker.freshHandshakes)
        let result = try scenario.get()
        E2EVerdict.expectBlocked(result, reason: .chainUntrusted, rule: "api.example.com", policy: .custom, proxy: scenario.proxy)
        #expect(checker.invocations == 0)
    }

    @Test("enforce false: a rejection is relayed and reported as custom_rejected")
    func reportOnly() throws {
        let (scenario, _) = try Self.scenario({
            try CustomChecker(in: $0, body: #"cat >/dev/null; echo 'unknown serial'; exit 1"#)
        }, policyExtra: #""enforce": false,"#)
        let result = try scenario.get("/bytes/7")
        #expect(result.status == 200)
        #expect(result.body == Data((0..<7).map { UInt8($0) }))
        E2EVerdict.expectEvent(action: .reported, reason: .customRejected, rule: "api.example.com", policy: .custom,
                               proxy: scenario.proxy)
        #expect(scenario.proxy.sink.events.first?.detail == "unknown serial")
    }
}

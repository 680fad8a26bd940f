import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §2.1 `cache`: a verdict answers for the same rule and served chain
/// until it runs out, and never across a reload; failures are not kept.
/// Every request makes a fresh handshake (no pool, no session resumption)
/// unless the test says otherwise.
@Suite("custom policy: cached verdicts", .serialized)
struct CustomPolicyCacheTests {
    static func scenario(body: String, policyExtra: String = "",
                         reuse: String = CustomChecker.freshHandshakes) throws -> (E2EScenario, CustomChecker) {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker(in: directory, body: body)
        let scenario = try E2EScenario(directory: directory, chain: TestPKI.chain(),
                                       config: #""hosts": { \#(checker.rule(extra: policyExtra)) },"# + reuse)
        return (scenario, checker)
    }

    @Test("an acceptance is asked once and reused for the next handshakes")
    func acceptanceCached() throws {
        let (scenario, checker) = try Self.scenario(body: #"cat >/dev/null; exit 0"#)
        for _ in 0..<3 { #expect(try scenario.get("/bytes/10").status == 200) }
        #expect(scenario.upstream.waitForConnections(3).count == 3)
        #expect(checker.invocations == 1)
    }

    @Test("a rejection is cached too: the second handshake is blocked without asking")
    func rejectionCached() throws {
        let (scenario, checker) = try Self.scenario(body: #"cat >/dev/null; echo revoked; exit 1"#)
        for _ in 0..<2 { #expect(try scenario.get("/bytes/10").status == 502) }
        #expect(checker.invocations == 1)
        #expect(scenario.proxy.sink.events.map(\.reason) == [.customRejected, .customRejected])
        E2EVerdict.expectNothingRelayed(scenario.upstream.waitForConnections(2), count: 2)
    }

    @Test("a failure is not cached: a checker that crashed is asked again")
    func failureNotCached() throws {
        let (scenario, checker) = try Self.scenario(body: #"cat >/dev/null; exit 3"#)
        for _ in 0..<2 { #expect(try scenario.get("/bytes/10").status == 502) }
        #expect(checker.invocations == 2)
    }

    @Test("the command is asked again once cache runs out")
    func expiry() throws {
        let (scenario, checker) = try Self.scenario(body: #"cat >/dev/null; exit 0"#, policyExtra: #""cache": "1s","#)
        #expect(try scenario.get("/bytes/10").status == 200)
        #expect(try scenario.get("/bytes/10").status == 200)
        #expect(checker.invocations == 1)
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try scenario.get("/bytes/10").status == 200)
        #expect(checker.invocations == 2)
    }

    @Test("cache \"0s\" asks on every handshake, and then no session is resumed either")
    func askEveryTime() throws {
        // Sessions on: a resumed handshake verifies nothing, so it must not stand in for the command.
        let (scenario, checker) = try Self.scenario(body: #"cat >/dev/null; exit 0"#, policyExtra: #""cache": "0s","#,
                                                    reuse: #""upstream_reuse": { "idle_per_host": 0 },"#)
        for _ in 0..<3 { #expect(try scenario.get("/bytes/10").status == 200) }
        #expect(checker.invocations == 3)
    }

    @Test("a reload (SIGHUP to the binary) starts with no verdicts: the command is asked again")
    func reloadForgets() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker(in: directory, body: #"cat >/dev/null; exit 0"#)
        let world = try TestWorld(directory: directory)
        try world.startUpstream()
        world.configuration.extra = #""hosts": { \#(checker.rule()) },"# + CustomChecker.freshHandshakes
        let daemon = try world.startDaemon()
        defer { daemon.kill() }
        for _ in 0..<2 { #expect(try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"]).status == 200) }
        #expect(checker.invocations == 1)
        daemon.send(SIGHUP)
        try daemon.waitForStderr(containing: "configuration generation 2 active")
        #expect(try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"]).status == 200)
        #expect(checker.invocations == 2)
    }
}

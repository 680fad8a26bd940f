import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §2.1: the handshake waits for the command without blocking the
/// loop; concurrent handshakes for one rule and chain share one child; at
/// most `limits.custom_checks` children run at once. One loop (`threads: 1`)
/// unless a test says otherwise, so "the same loop" is the only loop.
/// "EndToEnd" in the name puts the suite in the ThreadSanitizer pass
/// (`MULTI_LOOP_SUITES`): the executor's thread meets every loop's.
@Suite("custom policy: waiting without blocking, sharing and limiting children", .serialized)
struct CustomPolicyConcurrencyEndToEndTests {
    /// `curl --parallel` of `urls` through `proxy`, each response's status on its own line, in order.
    static func parallelStatuses(_ urls: [String], proxy: String, timeout: Int = 30) throws -> [Int] {
        var arguments = ["-s", "--max-time", String(timeout), "--parallel", "--parallel-immediate",
                         "--parallel-max", String(urls.count), "-x", proxy, "-w", "%{http_code}\n"]
        for url in urls { arguments += ["-o", "/dev/null", url] }
        let curl = try ChildProcess.run("/usr/bin/curl", arguments, timeout: TimeInterval(timeout + 10))
        return curl.outputLines.compactMap { Int($0) }
    }

    @Test("50 concurrent new upstream connections to one host start one child (cache \"0s\": sharing, not caching)")
    func oneChildForConcurrentHandshakes() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker(in: directory, body: #"cat >/dev/null; sleep 1; exit 0"#)
        let admin = ToolPaths.freePort()
        let config = #""hosts": { \#(checker.rule(extra: #""cache": "0s","#)) },"# + CustomChecker.freshHandshakes
            + #""admin": { "listen": "127.0.0.1:\#(admin)" },"#
        let scenario = try E2EScenario(directory: directory, chain: TestPKI.chain(), config: config)
        let statuses = try Self.parallelStatuses(Array(repeating: "http://api.example.com/bytes/10", count: 50),
                                                 proxy: scenario.world.proxyURL)
        #expect(statuses == Array(repeating: 200, count: 50))
        // Every request had its own upstream connection, and so its own handshake.
        #expect(scenario.upstream.waitForConnections(50).count == 50)
        #expect(checker.invocations == 1, "children started: \(checker.invocations)")
        let metrics = try Curl.run(["http://127.0.0.1:\(admin)/metrics"]).bodyText.split(separator: "\n").map(String.init)
        for sample in ["pinproxy_custom_checks_started_total 1", "pinproxy_custom_checks_shared_total 49",
                       "pinproxy_custom_checks_running 0", "pinproxy_custom_checks_waiting 0"] {
            #expect(metrics.contains(sample), "\(sample) not in /metrics")
        }
    }

    @Test("four loops: 40 concurrent handshakes to one host, spread over the loops, still start one child")
    func oneChildAcrossLoops() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker(in: directory, body: #"cat >/dev/null; sleep 1; exit 0"#)
        let world = try TestWorld(directory: directory)
        let upstream = try world.startUpstream()
        world.configuration.threads = 4
        world.configuration.extra = #""hosts": { \#(checker.rule(extra: #""cache": "0s","#)) },"# + CustomChecker.freshHandshakes
        _ = try world.startProxy()
        let statuses = try Self.parallelStatuses(Array(repeating: "http://api.example.com/bytes/10", count: 40),
                                                 proxy: world.proxyURL)
        #expect(statuses == Array(repeating: 200, count: 40))
        #expect(upstream.waitForConnections(40).count == 40)
        #expect(checker.invocations == 1, "children started: \(checker.invocations)")
    }

    @Test("a client that gives up while its handshake waits for the command leaves nothing behind: the daemon serves the next one")
    func clientLeavesDuringTheWait() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker(in: directory, body: #"cat >/dev/null; sleep 1; exit 0"#)
        let scenario = try E2EScenario(directory: directory, chain: TestPKI.chain(),
                                       config: #""hosts": { \#(checker.rule()) },"# + CustomChecker.freshHandshakes)
        // curl gives up after 300 ms (the later --max-time wins), mid-wait.
        let abandoned = try Curl.run(scenario.world.proxyArguments + ["--max-time", "0.3", "http://api.example.com/bytes/10"],
                                     timeout: 5)
        #expect(abandoned.status == 0 && abandoned.exitCode == 28)
        // The command still answers (after the client left), and its verdict serves the next handshake.
        #expect(eventually(timeout: 5) { checker.invocations == 1 })
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try scenario.get("/bytes/10").status == 200)
        #expect(checker.invocations == 1)
    }

    @Test("limits.custom_checks 2: of three commands asked at once, two run and the third starts when one ends")
    func childLimit() throws {
        let directory = try TemporaryDirectory()
        let hosts = ["a.cdn.example.com", "b.cdn.example.com", "c.cdn.example.com"]
        let checkers = try hosts.map { _ in
            try CustomChecker(in: directory, body: #"cat >/dev/null; sleep 1; echo "$(date +%s%N)" >> "$STATE/ends"; exit 0"#)
        }
        let rules = zip(hosts, checkers).map { $1.rule(host: $0) }.joined(separator: ", ")
        let config = #""hosts": { \#(rules) },"# + CustomChecker.freshHandshakes
        let world = try TestWorld(directory: directory)
        world.configuration.limits = #""custom_checks": 2,"#
        let upstream = try world.startUpstream(resolving: hosts.map { $0 + ":443" })
        world.configuration.threads = 1
        world.configuration.extra = config
        _ = try world.startProxy()
        let statuses = try Self.parallelStatuses(hosts.map { "http://\($0)/bytes/10" }, proxy: world.proxyURL)
        #expect(statuses == [200, 200, 200])
        #expect(upstream.waitForConnections(3).count == 3)
        // Start and end of each run, in nanoseconds: at most two overlap at any instant.
        let runs = checkers.compactMap { checker -> (start: UInt64, end: UInt64)? in
            guard let start = checker.callStarts.first?.nanoseconds,
                  let end = UInt64(contents(of: checker.directory + "/ends").trimmingCharacters(in: .whitespacesAndNewlines))
            else { return nil }
            return (start, end)
        }
        try #require(runs.count == 3)
        let mostAtOnce = runs.map { run in runs.filter { $0.start <= run.start && run.start < $0.end }.count }.max() ?? 0
        #expect(mostAtOnce == 2, "runs: \(runs)")
    }

    @Test("while a command sleeps, other clients on the same loop are served: 20 requests to another host each answered within 500 ms")
    func slowCommandDoesNotBlockTheLoop() throws {
        let directory = try TemporaryDirectory()
        let checker = try CustomChecker(in: directory, body: #"cat >/dev/null; sleep 3; exit 0"#)
        let world = try TestWorld(directory: directory)
        try world.startUpstream(resolving: ["slow.cdn.example.com:443", TestWorld.apiAuthority])
        world.configuration.threads = 1
        world.configuration.extra = #""hosts": { \#(checker.rule(host: "slow.cdn.example.com", extra: #""timeout": "6s","#)), "api.example.com": { "policy": "default" } },"#
        _ = try world.startProxy()
        let slow = try BackgroundCurl(world.proxyArguments + ["http://slow.cdn.example.com/bytes/10"], directory: directory.path)
        #expect(eventually(timeout: 5) { checker.invocations == 1 }, "the slow command never started")
        let clock = ContinuousClock()
        var latencies: [Duration] = []
        for _ in 0..<20 {
            let started = clock.now
            let result = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 10)
            latencies.append(clock.now - started)
            #expect(result.status == 200)
        }
        #expect(latencies.allSatisfy { $0 < .milliseconds(500) }, "latencies: \(latencies)")
        #expect(slow.finish(timeout: 10)?.status == 200)
    }
}

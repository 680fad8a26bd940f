import Foundation
import Testing

/// Many clients at once (issue 7, fault injection): 5,000 concurrent
/// connections against `limits.max_connections` 1000, to the daemon as a
/// process of its own with a descriptor limit large enough for all of them.
@Suite("Fault injection: 5,000 concurrent connections", .serialized)
struct LoadFaultTests {
    @Test("5,000 connections with max_connections 1000: the excess gets 503 connection_limit_reached, the rest are served, descriptors return")
    func fiveThousandConnections() throws {
        let world = try P2World()
        // idle 2s: pooled upstream connections are retired soon after the load,
        // so the descriptor count can come back to its baseline within the test.
        let config = try world.writeConfig(logPath: world.directory.path + "/violations.jsonl",
                                           timeouts: #""idle": "2s", "request_header": "30s","#,
                                           limits: #""max_connections": 1000,"#)
        let daemon = try P2Daemon(configPath: config, stderrPath: world.directory.path + "/stderr.log",
                                  descriptorLimit: 20000)
        let baseline = daemon.descriptorCount()
        let start = ContinuousClock.now
        let result = try P2World.runTool("p2_many.py", ["--proxy", "\(world.forwardPort)", "--url",
                                                        "http://api.example.com:8443/bytes/1000",
                                                        "--connections", "5000", "--hold", "4", "--deadline", "30"],
                                         timeout: 40)
        let seconds = FaultBed.seconds(since: start)
        let refused = result["refused_at_accept"] as? [String: Int] ?? [:]
        let proxyStatus = result["proxy_status_at_accept"] as? [String: Int] ?? [:]
        let served = result["served"] as? [String: Int] ?? [:]
        #expect(result["opened"] as? Int == 5000, "\(result)")
        #expect(refused == ["503": 4000], "\(result)")
        #expect(proxyStatus == ["pinproxy; error=connection_limit_reached": 4000], "\(result)")
        #expect(served == ["200": 1000], "\(result)")
        #expect(result["unanswered"] as? Int == 0, "\(result)")
        #expect(seconds < 35, "took \(seconds) s")

        try world.expectGoodRequestServed()
        // Pooled connections retire after timeouts.idle (2 s).
        let deadline = Date().addingTimeInterval(10)
        var count = daemon.descriptorCount()
        while count > baseline + 4 && Date() < deadline {
            usleep(100_000)
            count = daemon.descriptorCount()
        }
        #expect(count <= baseline + 4, "descriptors: baseline \(baseline), after \(count)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 15) == 0)
    }
}

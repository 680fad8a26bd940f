import Foundation
import Testing

/// Many clients at once against one slow upstream (issue 7, fault injection):
/// 5,000 concurrent connections against `limits.max_connections` 1000, to the
/// daemon as a process of its own with a descriptor limit large enough for all
/// of them. The upstream holds every response for a second, so the admitted
/// requests are all in flight at once, each on an upstream connection of its own.
@Suite("Fault injection: 5,000 concurrent connections to a slow upstream", .serialized)
struct LoadFaultTests {
    /// The upstream answers each request after this long.
    static let upstreamDelayMilliseconds = 1000

    struct Burst {
        var result: [String: Any]
        var seconds: Double
    }

    static func burst(_ world: TestWorld) throws -> Burst {
        let start = ContinuousClock.now
        let result = try LoadTool.run("p2_many.py", ["--proxy", "\(world.forwardPort)", "--url",
                                                        "http://api.example.com:8443/slow/\(upstreamDelayMilliseconds)/1000",
                                                        "--connections", "5000", "--hold", "4", "--deadline", "40"],
                                         timeout: 50)
        return Burst(result: result, seconds: start.secondsElapsed)
    }

    /// Every connection is answered: 1,000 served, 4,000 refused at the limit.
    /// Most refusals come before the client says anything, while the
    /// admitted ones hold their slots; the rest come once the client sends its
    /// request: the daemon defers accept (TCP_DEFER_ACCEPT, 1 s), so the kernel
    /// hands it a silent connection only when it stops waiting for first bytes,
    /// and under this burst some waits outlast the 4 s hold (Linux 6.18, SYN
    /// backlog 2,048: 61 to 1,142 of 4,000 per burst). Which phase hears a
    /// refusal is the kernel's timing; that there are exactly 4,000, each with
    /// its Proxy-Status, and that they begin unasked, is the daemon's.
    static func expectOutcome(_ burst: Burst, sourceLocation: SourceLocation = #_sourceLocation) {
        let result = burst.result
        let refused = result["refused_at_accept"] as? [String: Int] ?? [:]
        let answers = result["answers"] as? [String: Int] ?? [:]
        #expect(result["opened"] as? Int == 5000, "\(result)", sourceLocation: sourceLocation)
        #expect(answers == ["200": 1000, "503 pinproxy; error=connection_limit_reached": 4000], "\(result)",
                sourceLocation: sourceLocation)
        #expect(Set(refused.keys) == ["503"], "no refusal came unasked: \(result)", sourceLocation: sourceLocation)
        #expect(result["unanswered"] as? Int == 0, "\(result)", sourceLocation: sourceLocation)
        #expect(burst.seconds < 45, "took \(burst.seconds) s", sourceLocation: sourceLocation)
    }

    /// Waits until the daemon holds at most `limit` descriptors (pooled
    /// connections retire after `timeouts.idle`), and returns the count.
    static func settleDescriptors(_ daemon: ChildProcess, atMost limit: Int) -> Int {
        // Every 100 ms: listing 20,000 descriptors is not free.
        eventually(timeout: 15, interval: 0.1, daemon.descriptorCount, until: { $0 <= limit })
    }

    @Test("5,000 connections, max_connections 1000, upstream 1 s per answer: 4,000 get 503 connection_limit_reached, 1,000 are served concurrently, each loop's pool keeps at most 512, descriptors return and memory stops growing")
    func fiveThousandConnectionsToASlowUpstream() throws {
        // idle 4s: pooled upstream connections outlive the burst long enough to
        // be counted, then retire, so descriptors can return to the baseline.
        let bed = try FaultBed(hostile: .impostor, timeouts: #""idle": "4s", "request_header": "30s","#,
                               limits: #""max_connections": 1000,"#, runtime: .binary)
        let world = bed.world
        let daemon = try world.startDaemon(.init(signalMask: .clean, descriptorLimit: 20000))
        let baseline = daemon.descriptorCount()
        let residentAtStart = daemon.residentBytes()

        let first = try Self.burst(world)
        Self.expectOutcome(first)
        // Straight after the burst, before timeouts.idle: the upstream saw the
        // admitted requests in flight together, one connection each, and the
        // pool kept at most its 512 idle connections per host.
        let stats = try bed.good.stats(caFile: world.pki.rootFile)
        let pooled = (stats["open_connections"] ?? 0) - 1  // minus the /stats request's own
        #expect((stats["max_slow_in_flight"] ?? 0) >= 200, "the upstream was not kept busy: \(stats)")
        #expect((stats["connections"] ?? 0) <= 1000 + 1, "more upstream connections than requests: \(stats)")
        // Each of the config's 2 event loops has its own pool of at most 512 per host.
        #expect(pooled <= 2 * 512, "the pools kept \(pooled) idle connections: \(stats)")
        #expect(pooled >= 256, "the pool kept only \(pooled) of the connections it could reuse: \(stats)")
        try bed.expectNextRequestServed()

        let afterFirst = Self.settleDescriptors(daemon, atMost: baseline + 4)
        #expect(afterFirst <= baseline + 4, "descriptors: baseline \(baseline), after \(afterFirst)")
        let residentAfterFirst = daemon.residentBytes()

        // The same burst three times more. Freed TLS buffers and sessions go
        // back to the allocator, whose arenas settle over a few bursts
        // (measured: +70, +22, +8, +5, +2 MiB per identical burst), so a leak
        // shows as growth that does not slow down. The settling is uneven: one
        // arena may grow in a later burst whose connections the loops shared
        // differently, the more so beside the rest of the suite (fresh-clone
        // runs, in KiB: +46,324, +2,428, +13,204; +51,768, +560, +17,916;
        // +46,384, +11,852, +17,156, which failed a check over two later
        // bursts; seven bursts beside the suite: +50,416, +6,360, +10,780,
        // -600, -744, +1,708, +5,196). A leak grows every burst alike, so the
        // smallest of the three later growths must stay under a quarter of the
        // first (a leak of 3.5 KiB per connection, 17 MiB a burst, fails).
        var resident = [residentAtStart, residentAfterFirst]
        for _ in 2...4 {
            let again = try Self.burst(world)
            Self.expectOutcome(again)
            let after = Self.settleDescriptors(daemon, atMost: baseline + 4)
            #expect(after <= baseline + 4, "descriptors: baseline \(baseline), after \(after)")
            resident.append(daemon.residentBytes())
        }
        let firstGrowth = resident[1] - resident[0]
        let laterGrowth = zip(resident.dropFirst(2), resident.dropFirst(1)).map { $0 - $1 }.min() ?? 0
        #expect(resident.allSatisfy { $0 > 0 } && laterGrowth < firstGrowth / 4,
                "RSS at start and after each burst (KiB): \(resident.map { $0 >> 10 })")

        try bed.expectNextRequestServed()
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 15) == 0)
    }
}

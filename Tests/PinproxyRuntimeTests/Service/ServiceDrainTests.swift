import Foundation
import Testing

/// `systemctl stop pinproxy` (SIGTERM) on the real binary: stop accepting,
/// `STOPPING=1`, let in-flight exchanges finish, exit 0 (ARCHITECTURE
/// "ghostunnel — drain order on shutdown").
@Suite("pinproxy under systemd: drain on SIGTERM", .serialized)
struct ServiceDrainTests {
    /// Large enough that loopback socket buffers (several MB) cannot absorb a
    /// download: the daemon still relays when the SIGTERM arrives.
    static let downloadBytes = 24_000_000

    @Test("downloads running at SIGTERM complete byte-exact, STOPPING=1 is sent, new connections are refused, and the exit code is 0 once they are done",
          arguments: [1, 2])
    func drainFinishesInFlight(threads: Int) throws {
        let service = try ServiceUnderTest()
        try service.world.startUpstream()
        service.world.configuration.threads = threads
        // Longer than the downloads, so the drain is never cut short here.
        service.world.configuration.timeouts = #""shutdown": "60s","#
        try service.start()
        let process = try service.running()

        // 4 MB/s: about 6 s per download, most of it after the SIGTERM.
        let downloads = try (0..<3).map { _ in
            try BackgroundCurl(["--limit-rate", "4M", "-x", service.proxy, "http://api.example.com/bytes/\(Self.downloadBytes)"],
                               directory: service.world.directory.path)
        }
        for download in downloads { #expect(download.waitForBytes(1_000_000)) }

        let start = ContinuousClock.now
        process.send(SIGTERM)
        let stopping = service.notifications.receive(until: { NotifyListener.states([$0]) == ["STOPPING=1"] }, timeout: 10)
        #expect(NotifyListener.states(stopping) == ["STOPPING=1"])
        // The listeners close on the loops' next turn after STOPPING=1.
        #expect(eventually(timeout: 5) { RawClient.connectError(port: service.port) == ECONNREFUSED })
        #expect(process.isRunning)
        for download in downloads { #expect(download.receivedBytes < Self.downloadBytes) }

        // The daemon exits when the last download is done, not before and not at the shutdown timeout.
        let exit = process.waitForExit(timeout: 15)
        let exitSeconds = start.secondsElapsed
        #expect(exit == 0, "stderr:\n\(process.stderrText)")
        #expect(exitSeconds >= 1.5 && exitSeconds < 10, "exited \(exitSeconds) s after SIGTERM")
        let expected = TestUpstream.pattern(Self.downloadBytes)
        for download in downloads {
            let outcome = try #require(download.finish(timeout: 60))
            #expect(outcome == BackgroundCurl.Outcome(exitCode: 0, status: 200, downloadedBytes: Self.downloadBytes))
            #expect(download.body == expected)
        }
        #expect(process.stderrText.contains("daemon: stopped"))
        // Stopped accepting: nothing listens on the port any more.
        let after = try Curl.run(service.world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 5)
        #expect(after.exitCode == 7, "curl: couldn't connect")
    }
}

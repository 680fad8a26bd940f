import Foundation
import Testing

/// `systemctl reload pinproxy` (SIGHUP) on the real binary: the new
/// configuration applies to new requests, requests already running finish
/// under the old one, and an invalid file keeps the old one serving
/// (SPEC §2 config_generation, ARCHITECTURE "Daemon").
@Suite("pinproxy under systemd: reload", .serialized)
struct ServiceReloadTests {
    static let downloadBytes = 30_000_000

    @Test("after SIGHUP new requests get the new policy while a running download completes in full; an invalid file keeps it")
    func reloadKeepsRunningDownloads() throws {
        let service = try ServiceUnderTest()
        try service.world.startUpstream()
        service.world.configuration.threads = 1
        service.world.configuration.extra = #""default_policy": "default","#
        try service.start()
        let process = try service.running()
        // Threads carry their names into the kernel (top -H, ps -L): the violation log's writer.
        // It names itself once it runs, which can be a moment after READY=1.
        #expect(eventually(timeout: 10) { ThreadStat.niceValues(ofThreadsNamed: "violation-log", in: process.pid).count == 1 })

        // ~3 s at 10 MB/s: still running when the reload happens.
        let download = try BackgroundCurl(["--limit-rate", "10M", "-x", service.proxy,
                                           "http://api.example.com/bytes/\(Self.downloadBytes)"],
                                          directory: service.world.directory.path)
        #expect(download.waitForBytes(1_000_000))

        service.world.configuration.extra = #""default_policy": "deny","#
        try service.writeConfiguration()
        process.send(SIGHUP)
        #expect(NotifyListener.states(try service.waitForReady()) == ["RELOADING=1", "READY=1"])
        #expect(process.stderrText.contains("reload: configuration generation 2 active"))
        // The activation line says how long the reload took (make bench's reload phase reads it).
        #expect(process.stderrText.range(of: #"generation 2 active \(read, built and swapped in [0-9]+\.[0-9]{3} s\)"#,
                                         options: .regularExpression) != nil)
        // The build ran on the low-priority thread, which exists since, at nice 19.
        #expect(ThreadStat.niceValues(ofThreadsNamed: "pinproxy-low", in: process.pid) == [19])
        let denied = try Curl.run(["-x", service.proxy, "http://api.example.com/bytes/10"])
        #expect(denied.status == 403)
        #expect(denied.header("Proxy-Status") == "pinproxy; error=http_request_denied")
        // The download was still going when the new policy took effect.
        #expect(download.receivedBytes < Self.downloadBytes)

        let outcome = try #require(download.finish(timeout: 60))
        #expect(outcome == BackgroundCurl.Outcome(exitCode: 0, status: 200, downloadedBytes: Self.downloadBytes))

        // An unknown key is an error (SPEC §2); the reload is rejected, generation 2 serves on.
        service.world.configuration.extra = #""default_policy": "default", "default_polcy": "deny","#
        try service.writeConfiguration()
        process.send(SIGHUP)
        #expect(NotifyListener.states(try service.waitForReady()) == ["RELOADING=1", "READY=1"])
        let stillDenied = try Curl.run(["-x", service.proxy, "http://api.example.com/bytes/10"])
        #expect(stillDenied.status == 403)
        #expect(stillDenied.header("Proxy-Status") == "pinproxy; error=http_request_denied")
        let log = process.stderrText
        #expect(log.contains("reload: rejected, keeping generation 2"), "stderr:\n\(log)")
        #expect(log.contains("default_polcy"), "stderr:\n\(log)")

        process.send(SIGTERM)
        #expect(process.waitForExit(timeout: 20) == 0)
    }
}

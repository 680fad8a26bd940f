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
        let files = try TemporaryDirectory()
        let pki = try UpstreamPKI(directory: files.path)
        let upstream = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: files.path)
        let common = """
        "trust_store": "\(pki.rootFile)",
          "resolve": { "api.example.com:443": "127.0.0.1:\(upstream.port)" },
          "threads": 1,
        """
        let service = try ServiceUnderTest(body: common + #""default_policy": "default""#)
        try service.start()
        let process = try service.running()

        // ~3 s at 10 MB/s: still running when the reload happens.
        let download = try BackgroundCurl(["--limit-rate", "10M", "-x", service.proxy,
                                           "http://api.example.com/bytes/\(Self.downloadBytes)"],
                                          directory: files.path)
        #expect(download.waitForBytes(1_000_000))

        try service.writeConfiguration(body: common + #""default_policy": "deny""#)
        process.send(SIGHUP)
        #expect(NotifyListener.states(try service.waitForReady()) == ["RELOADING=1", "READY=1"])
        #expect(process.stderrText.contains("reload: configuration generation 2 active"))
        let denied = try Curl.run(["-x", service.proxy, "http://api.example.com/bytes/10"])
        #expect(denied.status == 403)
        #expect(denied.header("Proxy-Status") == "pinproxy; error=http_request_denied")
        // The download was still going when the new policy took effect.
        #expect(download.receivedBytes < Self.downloadBytes)

        let outcome = try #require(download.finish(timeout: 60))
        #expect(outcome == BackgroundCurl.Outcome(exitCode: 0, status: 200, downloadedBytes: Self.downloadBytes))

        // An unknown key is an error (SPEC §2); the reload is rejected, generation 2 serves on.
        try service.writeConfiguration(body: common + #""default_policy": "default", "default_polcy": "deny""#)
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

import Foundation
import Testing

/// `systemctl stop pinproxy` (SIGTERM) on the real binary: stop accepting,
/// `STOPPING=1`, let in-flight exchanges finish, exit 0 (ARCHITECTURE
/// "ghostunnel — drain order on shutdown").
@Suite("pinproxy under systemd: drain on SIGTERM", .serialized)
struct ServiceDrainTests {
    static let downloadBytes = 20_000_000

    @Test("a download running at SIGTERM completes in full, new connections are refused, and the exit code is 0")
    func drainFinishesInFlight() throws {
        let service = try ServiceUnderTest()
        try service.world.startUpstream()
        service.world.configuration.threads = 1
        // Longer than the download, so the drain is never cut short here.
        service.world.configuration.timeouts = #""shutdown": "60s","#
        try service.start()
        let process = try service.running()

        // ~2 s at 10 MB/s.
        let download = try BackgroundCurl(["--limit-rate", "10M", "-x", service.proxy,
                                           "http://api.example.com/bytes/\(Self.downloadBytes)"],
                                          directory: service.world.directory.path)
        #expect(download.waitForBytes(1_000_000))

        process.send(SIGTERM)
        let stopping = service.notifications.receive(until: { NotifyListener.states([$0]) == ["STOPPING=1"] }, timeout: 10)
        #expect(NotifyListener.states(stopping) == ["STOPPING=1"])
        // The listeners close on the loop's next turn after STOPPING=1.
        #expect(eventually(timeout: 5) { Self.connectError(port: service.port) == ECONNREFUSED })
        #expect(process.isRunning)
        #expect(download.receivedBytes < Self.downloadBytes)

        let outcome = try #require(download.finish(timeout: 60))
        #expect(outcome == BackgroundCurl.Outcome(exitCode: 0, status: 200, downloadedBytes: Self.downloadBytes))
        #expect(process.waitForExit(timeout: 20) == 0, "stderr:\n\(process.stderrText)")
        #expect(process.stderrText.contains("daemon: stopped"))
    }

    /// errno of a TCP connect to 127.0.0.1:`port`, 0 when it connected.
    static func connectError(port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0 ? 0 : errno
    }
}

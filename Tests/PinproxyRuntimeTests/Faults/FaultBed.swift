import Foundation
import Testing

/// One fault scenario's world: pinproxy in process, a hostile upstream behind
/// `api.example.com:443` and a well-behaved one behind `api.example.com:8443`
/// (the same certificate name, so one PKI and one trust store serve both).
///
/// The well-behaved upstream is how a test proves the daemon "still serves
/// the next request"; the hostile one is where the fault happens, and the
/// daemon's sockets towards it must all be gone afterwards.
final class FaultBed {
    /// What stands behind `api.example.com:443`.
    enum Hostile {
        case fault(FaultUpstream.Mode)
        /// Tests/Tools/upstream.py with extra arguments (`--stall-handshake`, …).
        case upstream([String])
    }

    // Declared first so the daemon stops before its peers are killed.
    let proxy: ProxyUnderTest
    let good: TestUpstream
    let hostilePort: UInt16
    let faultUpstream: FaultUpstream?
    let plainUpstream: TestUpstream?
    let pki: UpstreamPKI
    let directory: TemporaryDirectory

    /// `timeouts` and `limits` are JSON5 members (`"idle": "1s",`) added to
    /// those sections; `shutdown` is always 1s so a test's teardown is bounded.
    init(hostile: Hostile, timeouts: String = "", limits: String = "") throws {
        directory = try TemporaryDirectory()
        pki = try UpstreamPKI(directory: directory.path)
        good = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        switch hostile {
        case let .fault(mode):
            let fault = try FaultUpstream(mode: mode, certificateChain: pki.servedChainFile, key: pki.keyFile,
                                          directory: directory.path)
            faultUpstream = fault
            plainUpstream = nil
            hostilePort = fault.port
        case let .upstream(arguments):
            let plain = try TestUpstream(certificateChain: pki.servedChainFile, key: pki.keyFile,
                                         directory: directory.path, extraArguments: arguments)
            plainUpstream = plain
            faultUpstream = nil
            hostilePort = plain.port
        }
        proxy = try ProxyUnderTest(directory: directory.path, body: """
            "trust_store": "\(pki.rootFile)",
            "resolve": { "api.example.com:443": "127.0.0.1:\(hostilePort)",
                         "api.example.com:8443": "127.0.0.1:\(good.port)" },
            "timeouts": { "shutdown": "1s", \(timeouts) },
            "limits": { \(limits) },
            "threads": 2,
            """)
    }

    var proxyArguments: [String] { ["-x", proxy.forwardProxy] }

    /// A URL fetched from the hostile upstream.
    func hostileURL(_ path: String) -> String { "http://api.example.com\(path)" }

    /// A URL fetched from the well-behaved upstream.
    func goodURL(_ path: String) -> String { "http://api.example.com:8443\(path)" }

    /// The daemon's sockets for client sessions and towards the hostile upstream.
    func census() -> DaemonSocketCensus {
        DaemonSocketCensus.take(listenerPorts: [proxy.forwardPort, proxy.gatewayPort], upstreamPort: hostilePort)
    }

    /// Waits (bounded) until the daemon holds no client session and no
    /// hostile connection beyond `pooled` idle ones (a well-behaved upstream's
    /// connection stays pooled, one per loop at most), and returns what is left.
    func waitForNoSockets(pooled: Int = 0, timeout: TimeInterval = 3) -> DaemonSocketCensus {
        DaemonSocketCensus.waitUntilEmpty(listenerPorts: [proxy.forwardPort, proxy.gatewayPort],
                                          upstreamPort: hostilePort, pooled: pooled, timeout: timeout)
    }

    /// The request after the fault: a GET through the same daemon to the
    /// well-behaved upstream must be answered in full.
    func expectNextRequestServed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Curl.run(proxyArguments + [goodURL("/bytes/1000")], timeout: 10)
        #expect(result.exitCode == 0, sourceLocation: sourceLocation)
        #expect(result.status == 200, sourceLocation: sourceLocation)
        #expect(result.body == Self.pattern(1000), sourceLocation: sourceLocation)
    }

    /// upstream.py's body bytes: byte i is i % 251.
    static func pattern(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }

    /// Seconds since `start`, for bounds on how long a fault takes to answer.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

import Foundation
import Testing

/// One fault scenario, built on a `TestWorld`: a hostile upstream behind
/// `api.example.com:443` and a well-behaved one behind `api.example.com:8443`
/// (the same certificate name, so one PKI and one trust store serve both).
///
/// The well-behaved upstream is how a test proves the daemon "still serves
/// the next request"; the hostile one is where the fault happens. Faults of
/// a session run pinproxy in process (`.inProcess`), where the daemon's
/// sockets towards the hostile upstream can be counted and must all be gone
/// afterwards; faults of the process (signals, rlimits, a full disk) run the
/// binary (`.binary`: the test starts it with `world.startDaemon`).
final class FaultBed {
    /// What stands behind `api.example.com:443`.
    enum Hostile {
        case fault(FaultUpstream.Mode)
        /// Tests/Tools/upstream.py with extra arguments (`--stall-handshake`, …).
        case upstream([String])
        /// A man in the middle: a valid-looking chain for the same name from a
        /// root the trust store does not hold, so every request there is
        /// blocked as `chain_untrusted` and logged.
        case impostor
    }

    enum Runtime { case inProcess, binary }

    let world: TestWorld
    let good: TestUpstream
    let hostilePort: UInt16
    let faultUpstream: FaultUpstream?
    let plainUpstream: TestUpstream?
    /// The daemon, when it runs in process.
    private(set) var proxy: ProxyUnderTest?

    /// `timeouts` and `limits` are JSON5 members (`"idle": "1s",`) added to
    /// those sections. `shutdown` is 1 s in process, so a test's teardown is
    /// bounded, and 10 s for the binary, which tests stop with SIGTERM.
    init(hostile: Hostile, timeouts: String = "", limits: String = "", runtime: Runtime = .inProcess) throws {
        world = try TestWorld()
        good = try world.startUpstream(resolving: ["api.example.com:8443"])
        switch hostile {
        case let .fault(mode):
            let fault = try world.startFaultUpstream(mode)
            (faultUpstream, plainUpstream, hostilePort) = (fault, nil, fault.port)
        case let .upstream(arguments):
            let plain = try world.startUpstream(arguments: arguments)
            (faultUpstream, plainUpstream, hostilePort) = (nil, plain, plain.port)
        case .impostor:
            let impostor = try UpstreamPKI(directory: world.directory.path, name: "impostor",
                                           chain: TestPKI.chain(rootName: "Impostor Root CA"))
            let mitm = try world.startUpstream(certificateChain: impostor.servedChainFile, key: impostor.keyFile)
            (faultUpstream, plainUpstream, hostilePort) = (nil, mitm, mitm.port)
        }
        world.configuration.threads = 2
        world.configuration.timeouts = #""shutdown": "\#(runtime == .inProcess ? "1s" : "10s")", "# + timeouts
        world.configuration.limits = limits
        if runtime == .inProcess { proxy = try world.startProxy() }
    }

    var proxyArguments: [String] { world.proxyArguments }

    /// A URL fetched from the hostile upstream.
    func hostileURL(_ path: String) -> String { "http://api.example.com\(path)" }

    /// A URL fetched from the well-behaved upstream.
    func goodURL(_ path: String) -> String { "http://api.example.com:8443\(path)" }

    /// The in-process daemon's sockets for client sessions and towards the hostile upstream.
    func census() -> DaemonSocketCensus {
        DaemonSocketCensus.take(listenerPorts: [world.forwardPort, world.gatewayPort], upstreamPort: hostilePort)
    }

    /// Waits (bounded) until the daemon holds no client session and no
    /// hostile connection beyond `pooled` idle ones (a well-behaved upstream's
    /// connection stays pooled, one per loop at most), and returns what is left.
    func waitForNoSockets(pooled: Int = 0, timeout: TimeInterval = 3) -> DaemonSocketCensus {
        DaemonSocketCensus.waitUntilEmpty(listenerPorts: [world.forwardPort, world.gatewayPort],
                                          upstreamPort: hostilePort, pooled: pooled, timeout: timeout)
    }

    /// The request after the fault: a GET through the same daemon to the
    /// well-behaved upstream must be answered in full.
    func expectNextRequestServed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Curl.run(proxyArguments + [goodURL("/bytes/1000")], timeout: 10)
        #expect(result.exitCode == 0, sourceLocation: sourceLocation)
        #expect(result.status == 200, "Proxy-Status: \(result.header("Proxy-Status") ?? "-")", sourceLocation: sourceLocation)
        #expect(result.body == TestUpstream.pattern(1000), sourceLocation: sourceLocation)
    }
}

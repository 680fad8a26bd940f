import Foundation
@testable import PinproxyRuntime

/// One test's world, built in one place: a directory, a PKI for
/// api.example.com generated at test time, the peers pinproxy talks to on
/// loopback, and the configuration that wires them up (listeners on the
/// world's ports, violation log, trust store, `resolve` entries).
///
/// The same world runs either runtime: `startProxy()` loads the configuration
/// into pinproxy in this process (real loops and sockets, a recording sink);
/// `writeConfiguration()` and `startDaemon()` hand it to the real binary, for
/// what belongs to a process (signals, exit codes, rlimits, `/proc`).
/// Suites add their vocabulary on top (`FaultBed`, `E2EScenario`,
/// `SmugglingBed`, `ServiceUnderTest`).
final class TestWorld {
    /// The name every test certificate is for.
    static let apiHost = "api.example.com"
    /// What a forward request for `http://api.example.com/…` connects to.
    static let apiAuthority = "api.example.com:443"

    let directory: TemporaryDirectory
    /// Leaf + intermediate + root for api.example.com, as files; the default trust store.
    let pki: UpstreamPKI
    /// The listeners' ports, chosen on first use: a port probed free stays
    /// free only until something else binds it (a peer's port 0, a client's
    /// local port), so it is chosen as late as the test allows, not when the
    /// world is made.
    private(set) lazy var forwardPort = ToolPaths.freePort()
    private(set) lazy var gatewayPort = ToolPaths.freePort()
    var configuration: ProxyConfiguration
    private var peers: [AnyObject] = []
    private var proxies: [ProxyUnderTest] = []

    /// `directory` may be shared with other worlds (every file a world makes
    /// has a fresh name); without one the world makes its own. `chain` is
    /// the PKI's (a fresh one by default).
    init(directory: TemporaryDirectory? = nil, chain: TestPKI.Chain? = nil) throws {
        let directory = try directory ?? TemporaryDirectory()
        self.directory = directory
        pki = try UpstreamPKI(directory: directory.path, name: "pki-\(UUID().uuidString)", chain: chain)
        configuration = ProxyConfiguration(violationLog: directory.file("violations-\(UUID().uuidString).jsonl"),
                                           trustStore: pki.rootFile)
    }

    deinit {
        // The proxies first: a daemon shutting down still talks to its peers.
        proxies.removeAll()
        peers.removeAll()
    }

    // MARK: Peers

    /// Starts upstream.py serving `certificateChain` and `key` (the world's
    /// PKI by default) and resolves `authorities` to it.
    @discardableResult
    func startUpstream(certificateChain: String? = nil, key: String? = nil, arguments: [String] = [],
                       capAtTLS12: Bool = false, resolving authorities: [String] = [apiAuthority]) throws -> TestUpstream {
        let upstream = try TestUpstream(certificateChain: certificateChain ?? pki.servedChainFile, key: key ?? pki.keyFile,
                                        directory: directory.path, extraArguments: arguments, capAtTLS12: capAtTLS12)
        return adopt(upstream, port: upstream.port, resolving: authorities)
    }

    /// Starts upstream.py serving `certificates` (leaf first) with `key`, written to files first.
    @discardableResult
    func startUpstream(serving certificates: [X509Certificate], key: TestKey, arguments: [String] = [],
                       resolving authorities: [String] = [apiAuthority]) throws -> TestUpstream {
        let keyFile = directory.file("key-\(UUID().uuidString).pem")
        try key.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
        return try startUpstream(certificateChain: directory.pemFile(certificates), key: keyFile, arguments: arguments,
                                 resolving: authorities)
    }

    /// Starts fault_upstream.py in `mode` with the world's PKI, resolved for `authorities`.
    @discardableResult
    func startFaultUpstream(_ mode: FaultUpstream.Mode, resolving authorities: [String] = [apiAuthority]) throws -> FaultUpstream {
        let fault = try FaultUpstream(mode: mode, certificateChain: pki.servedChainFile, key: pki.keyFile,
                                      directory: directory.path)
        return adopt(fault, port: fault.port, resolving: authorities)
    }

    /// Starts recording_origin.py with the world's PKI, resolved for `authorities`.
    @discardableResult
    func startOrigin(resolving authorities: [String] = [apiAuthority]) throws -> RecordingOrigin {
        let origin = try RecordingOrigin(certificateChain: pki.servedChainFile, key: pki.keyFile, directory: directory.path)
        return adopt(origin, port: origin.port, resolving: authorities)
    }

    /// Keeps `peer` as long as the world (after its proxies stop) and
    /// resolves `authorities` to its `port`.
    @discardableResult
    func adopt<Peer: AnyObject>(_ peer: Peer, port: UInt16? = nil, resolving authorities: [String] = []) -> Peer {
        peers.append(peer)
        if let port { authorities.forEach { configuration.resolve($0, to: port) } }
        return peer
    }

    // MARK: Runtimes

    /// pinproxy in this process on the configuration as it is now, with a
    /// gateway listener to api.example.com:443 beside the forward one. The
    /// world keeps it and stops it first when released. Its log lines go to
    /// `logger` when given.
    @discardableResult
    func startProxy(environment: [String: String] = [:], logger: Logger? = nil) throws -> ProxyUnderTest {
        let proxy = try ProxyUnderTest(configuration: configuration, forwardPort: forwardPort, gatewayPort: gatewayPort,
                                       gatewayUpstream: Self.apiAuthority, environment: environment, logger: logger)
        proxies.append(proxy)
        return proxy
    }

    /// Writes the configuration for the binary (forward listener only) and
    /// returns its path. Written in place, not renamed: a daemon re-reads the
    /// path on SIGHUP.
    @discardableResult
    func writeConfiguration(name: String = "pinproxy.json") throws -> String {
        try directory.write(configuration.text(listeners: [.forward(port: forwardPort)]), to: name)
    }

    /// Writes the configuration and starts the binary on it, as a service
    /// manager would (`PinproxyBinary.startDaemon`); returns once it listens.
    func startDaemon(_ options: ChildProcess.Options = .init(signalMask: .clean)) throws -> ChildProcess {
        try PinproxyBinary.startDaemon(configuration: writeConfiguration(), options: options)
    }

    // MARK: Requests

    /// The forward listener as curl's `-x` wants it.
    var proxyURL: String { "http://127.0.0.1:\(forwardPort)" }
    var proxyArguments: [String] { ["-x", proxyURL] }
}

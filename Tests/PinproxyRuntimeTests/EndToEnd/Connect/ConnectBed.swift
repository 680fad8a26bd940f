import Foundation
import Testing
@testable import PinproxyRuntime

/// One CONNECT scenario on a `TestWorld`, as SPEC §3.1 sets it up: pinproxy
/// in process with an interception CA made at test time, and behind it
///
/// - `api.example.com:443`, listed in `hosts` (policy `default` against the
///   world's root): **intercepted**, its origin the recording origin, which
///   logs every connection and every request it parsed;
/// - `tunnel.example.net:443`, unlisted under `default_policy: "default"`:
///   **tunnelled blind** to the TCP echo origin (`TunnelOrigin`);
/// - `connect_ports: [443]`, `timeouts.handshake` and `timeouts.tunnel_idle`
///   1 s, so that the timeouts are measurable in a test.
///
/// pinproxy's log lines are captured (`log()`), so a test asserts what the
/// daemon said, not only what the client saw. After a hostile client, the
/// bed proves the daemon still serves (`expectInterceptedClientServed`,
/// `expectTunnelClientServed`) and holds no socket for it (`census`).
final class ConnectBed {
    static let interceptedHost = "api.example.com"
    static let interceptedAuthority = "api.example.com:443"
    static let tunnelAuthority = "tunnel.example.net:443"
    static let handshakeTimeout: TimeInterval = 1
    static let tunnelIdle: TimeInterval = 1

    let origin: RecordingOrigin
    let tunnelOrigin: TunnelOrigin
    let ca: TestCA
    let proxy: ProxyUnderTest
    private let captured = CapturedLog()
    private var logged = ""
    // Declared last, so released last: the world stops the proxy before its peers.
    let world: TestWorld

    /// `logLevel` `.debug` shows routine ends too (a tunnel closed idle);
    /// `extraHosts` are more `hosts` members (JSON5, each with its comma);
    /// `prepare` adds peers or configuration before pinproxy starts;
    /// `handshakeTimeout` replaces the 1 s for suites that trickle a
    /// ClientHello for a while and measure no timeout (on a loaded machine
    /// half a second of trickle can outlast 1 s).
    init(logLevel: Logger.Level = .info, extraHosts: String = "", handshakeTimeout: Int = Int(ConnectBed.handshakeTimeout),
         prepare: (TestWorld) throws -> Void = { _ in }) throws {
        world = try TestWorld()
        origin = try world.startOrigin(resolving: [Self.interceptedAuthority])
        tunnelOrigin = world.adopt(try TunnelOrigin(directory: world.directory.path))
        world.configuration.resolve(Self.tunnelAuthority, to: tunnelOrigin.port)
        ca = try TestCA(names: [Self.interceptedHost])
        world.configuration.threads = 2
        world.configuration.timeouts = #""handshake": "\#(handshakeTimeout)s", "tunnel_idle": "1s", "shutdown": "1s","#
        world.configuration.extra = """
            "interception": { "ca_dir": "\(ca.directory)" },
            "connect_ports": [443],
            "hosts": { "\(Self.interceptedHost)": { "policy": "default" }, \(extraHosts) },
            """
        try prepare(world)
        captured.logger.minimumLevel = logLevel
        proxy = try world.startProxy(logger: captured.logger)
    }

    /// The interception CA's root: what a client of an intercepted host trusts.
    var caRoot: String { ca.file("root.pem") }

    /// Everything pinproxy logged so far.
    func log() -> String {
        logged += captured.drain()
        return logged
    }

    /// Waits (bounded) until the log contains `text`; the whole log either way.
    @discardableResult
    func waitForLog(containing text: String, timeout: TimeInterval = 5) -> String {
        eventually(timeout: timeout, { log() }, until: { $0.contains(text) })
    }

    /// connect_client.py against the forward listener, verifying with the CA's root.
    func client(_ arguments: [String], target: String = interceptedAuthority, ca: String? = nil) throws -> ConnectClient.Outcome {
        try ConnectClient.run(proxyPort: proxy.forwardPort, target: target, ca: ca ?? caRoot, arguments)
    }

    /// Requests the recording origin parsed, in order.
    func originRequests() -> [RecordingOrigin.Event] { origin.events().filter { $0.event == "request" } }

    /// Heads the recording origin began to read: a request that reached it at all.
    func originHeads() -> [RecordingOrigin.Event] { origin.events().filter { $0.event == "head" } }

    /// The daemon's client sessions and its connections to `upstreamPort`
    /// (the recording origin by default), once none is left but `pooled`
    /// idle ones, or after `timeout`.
    func census(upstreamPort: UInt16? = nil, pooled: Int = 0, timeout: TimeInterval = 5) -> DaemonSocketCensus {
        DaemonSocketCensus.waitUntilEmpty(listenerPorts: [world.forwardPort, world.gatewayPort],
                                          upstreamPort: upstreamPort ?? origin.port, pooled: pooled, timeout: timeout)
    }

    // MARK: raw CONNECTs

    /// A raw client that sent `CONNECT authority` (and `early` bytes right
    /// behind the head, in the same write) and read pinproxy's answer; bytes
    /// that came behind the answer are in `pending`.
    func rawConnect(_ authority: String, fields: String = "", early: [UInt8] = [])
        throws -> (client: RawClient, answer: RawHTTPResponse?, pending: [UInt8]) {
        let client = try RawClient(port: proxy.forwardPort)
        client.send(Array("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\(fields)\r\n".utf8) + early)
        var pending: [UInt8] = []
        let answer = RawHTTPResponse.read(from: client, pending: &pending, method: "CONNECT")
        return (client, answer, pending)
    }

    // MARK: the next client

    /// A well-behaved HTTPS client (curl through CONNECT, trusting the CA)
    /// gets its answer from the intercepted origin: the daemon kept serving.
    func expectInterceptedClientServed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let marker = "/next-\(UUID().uuidString)"
        let result = try Curl.run(["-x", proxy.forwardProxy, "--cacert", caRoot, "https://\(Self.interceptedHost)\(marker)"],
                                  timeout: 10)
        #expect(result.exitCode == 0, "curl exit \(result.exitCode)", sourceLocation: sourceLocation)
        #expect(result.status == 200, sourceLocation: sourceLocation)
        #expect(result.bodyText.contains(marker), "\(result.bodyText)", sourceLocation: sourceLocation)
    }

    /// A client of the blind tunnel gets its bytes echoed by the tunnel origin.
    func expectTunnelClientServed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ping = Array("ping \(UUID().uuidString)".utf8)
        let (client, answer, pending) = try rawConnect(Self.tunnelAuthority, early: ping)
        #expect(answer?.status == 200, sourceLocation: sourceLocation)
        var echoed = pending
        while echoed.count < ping.count {
            let (data, ending) = client.readSome(timeout: 5)
            echoed += data
            if ending != nil || data.isEmpty { break }
        }
        #expect(echoed == ping, sourceLocation: sourceLocation)
    }
}

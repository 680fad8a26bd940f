import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The vocabulary of the real-client suites (SPEC §3.1 seen from the
/// client): one world per test with the four hosts a client meets through
/// `CONNECT`, the client abstraction, and what a client run leaves behind.
///
/// The world's names:
/// - `pinned` (api.example.com): a `pin-public-keys` rule pinning the real
///   intermediate's key; its origin serves the real chain. Intercepted.
/// - `impostor` (pay.example.com): the same rule, but its origin is a man in
///   the middle whose CA pinproxy's trust store also trusts. Blocked at CONNECT.
/// - `unlisted` (files.example.net): no rule, `default_policy: "default"`.
///   Tunnelled blind to the real origin.
/// - the same unlisted name through a second proxy with `default_policy:
///   "deny"`: 403 at CONNECT.
enum ConnectHost {
    static let pinned = "api.example.com"
    static let impostor = "pay.example.com"
    static let unlisted = "files.example.net"
}

/// What a client fetches: 1 MiB through interception (past the relay's
/// 512 KiB high watermark, so a client slower than the origin has
/// back-pressure pause and resume the upstream inside the intercepted
/// tunnel), 64 MiB through the blind tunnel (SPEC §3.1: relayed byte-exact
/// with back-pressure).
enum Payload: CaseIterable {
    case small, large

    var size: Int { self == .small ? 1 << 20 : 64 << 20 }
}

/// A body as length and SHA-256 (lower-case hex): what a client must have received.
struct BodyDigest: Equatable, CustomStringConvertible {
    var length: Int
    var sha256: String

    init(_ bytes: [UInt8]) {
        length = bytes.count
        sha256 = Digest.sha256(bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// The digest of the file at `path`; nil when there is none.
    init?(file path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        self.init([UInt8](data))
    }

    /// upstream.py's `/bytes/N` body (byte i is i % 251), built by doubling:
    /// 64 MiB byte by byte would take seconds in a debug build.
    static func pattern(_ count: Int) -> BodyDigest {
        var bytes = (0..<251).map { UInt8($0) }
        while bytes.count < count { bytes += bytes }
        return BodyDigest(Array(bytes.prefix(count)))
    }

    var description: String { "\(length) bytes, sha256 \(sha256)" }
}

/// What one client run left: its exit status, the HTTP status it reports
/// (nil when it got no response), its own words when it failed, and the
/// file its body went to.
struct ClientOutcome {
    var exitStatus: Int32
    var status: Int?
    var error: String
    var bodyFile: String

    var body: BodyDigest? { BodyDigest(file: bodyFile) }

    /// The one JSON line the helper programs print (https_client.py,
    /// go-https-client, HTTPSClient.java): `{"status": …, "error": …}`.
    init(helper result: ChildProcess.Result, bodyFile: String) {
        exitStatus = result.status
        self.bodyFile = bodyFile
        let line = result.outputLines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any]
        status = line?["status"] as? Int
        error = (line?["error"] as? String) ?? (line == nil ? "no JSON line; stdout \(result.output) stderr \(result.errorOutput)" : "")
    }

    init(exitStatus: Int32, status: Int?, error: String, bodyFile: String) {
        self.exitStatus = exitStatus
        self.status = status
        self.error = error
        self.bodyFile = bodyFile
    }
}

/// A real HTTPS client program, run through a forward listener.
protocol HTTPSClient {
    /// What the client fetches from: upstream.py, or a git server.
    var origin: ConnectWorld.OriginKind { get }

    /// Fetches `url` through the forward proxy on `proxyPort`, trusting only
    /// the roots in the PEM file `trusting`, with its body (or the cloned
    /// payload) written below `directory`.
    func fetch(_ url: String, proxyPort: UInt16, trusting roots: String, in directory: TemporaryDirectory) throws -> ClientOutcome

    /// Whether `outcome` is this client's own report that the proxy answered
    /// its CONNECT with `status` (each client says it in its own words).
    func reportsRefusedConnect(_ outcome: ClientOutcome, status: Int) -> Bool
}

/// One test's world for a real client: the real PKI and an impostor's, the
/// interception CA, the origins, and two proxies in process (the
/// intercepting one and one with `default_policy: "deny"`).
final class ConnectWorld {
    /// The server behind the pinned and unlisted names.
    enum OriginKind { case bytes, git }

    /// Who serves the unlisted name.
    enum UnlistedOrigin {
        /// The real origin, with the real chain.
        case real
        /// upstream.py with a leaf for the unlisted name that the interception
        /// CA's own issuing key signed through pinproxy's minting path, minus its
        /// scope check: what a thief of that key would serve.
        case forgedWithInterceptionKey
    }

    let origin: OriginKind
    /// The real chain, for the pinned and the unlisted name.
    let real: TestPKI.Chain
    /// The man in the middle's chain for the impostor name, from a root pinproxy trusts too.
    let attacker: TestPKI.Chain
    /// The real chain's root: what a client trusts for the blind tunnel, and nothing else.
    let originRoot: String
    /// `<ca_dir>/root.pem`: what a client trusts for intercepted hosts.
    let interceptionRoot: String
    let impostor: TestUpstream
    /// The interception CA pinproxy loads from its `ca_dir`.
    let authority: InterceptionAuthority
    /// The origin of `.forgedWithInterceptionKey`, nil otherwise.
    let forgedOrigin: TestUpstream?
    /// upstream.py for `.bytes`, nil for `.git`.
    let bytesOrigin: TestUpstream?
    /// The git server for `.git`, nil for `.bytes`.
    let gitOrigin: GitOrigin?
    /// The intercepting proxy (`default_policy: "default"`), kept by the world too.
    let proxy: ProxyUnderTest
    /// The same configuration with `default_policy: "deny"`.
    let denyingProxy: ProxyUnderTest
    // Declared last, so released last: both proxies stop before the world kills its peers.
    let world: TestWorld

    var directory: TemporaryDirectory { world.directory }

    /// `payload` is what the test fetches (a git origin makes only that repository).
    init(origin: OriginKind, payload: Payload, unlisted: UnlistedOrigin = .real) throws {
        self.origin = origin
        real = try TestPKI.chain(names: ["DNS:\(ConnectHost.pinned)", "DNS:\(ConnectHost.unlisted)"], rootName: "Real Root CA")
        attacker = try TestPKI.chain(names: ["DNS:\(ConnectHost.impostor)"], rootName: "Attacker Root CA")
        world = try TestWorld(chain: real)
        originRoot = world.pki.rootFile
        let caDirectory = world.directory.file("interception-ca")
        authority = try InterceptionAuthority.create(in: caDirectory,
                                                     for: InterceptionScope(names: [ConnectHost.pinned, ConnectHost.impostor]))
        interceptionRoot = caDirectory + "/root.pem"

        let pinnedAuthority = ConnectHost.pinned + ":443", unlistedAuthority = ConnectHost.unlisted + ":443"
        let served = unlisted == .real ? [pinnedAuthority, unlistedAuthority] : [pinnedAuthority]
        switch origin {
        case .bytes:
            bytesOrigin = try world.startUpstream(resolving: served)
            gitOrigin = nil
        case .git:
            bytesOrigin = nil
            let git = try GitOrigin(certificateChain: world.pki.servedChainFile, key: world.pki.keyFile,
                                    serving: payload, directory: world.directory)
            gitOrigin = world.adopt(git, port: git.port, resolving: served)
        }
        impostor = try world.startUpstream(serving: attacker.served, key: attacker.leaf.key,
                                           resolving: [ConnectHost.impostor + ":443"])
        if unlisted == .forgedWithInterceptionKey {
            guard let host = HostName(ConnectHost.unlisted) else { throw TestFailure("\(ConnectHost.unlisted) is no host name") }
            let forged = try authority.leafIssuer.mint(for: host, at: Date())
            forgedOrigin = try world.startUpstream(certificateChain: world.directory.pemFile([forged.certificate, authority.issuing]),
                                                   key: caDirectory + "/leaf.key", resolving: [unlistedAuthority])
        } else {
            forgedOrigin = nil
        }

        let rule = #"{ "policy": "pin-public-keys", "pins": ["\#(E2EScenario.pin(real.intermediate.certificate))", "\#(E2EScenario.backupPin())"] }"#
        world.configuration.trustStore = try world.directory.pemFile([real.root.certificate, attacker.root.certificate])
        world.configuration.threads = 2
        world.configuration.extra = """
        "hosts": { "\(ConnectHost.pinned)": \(rule), "\(ConnectHost.impostor)": \(rule) },
          "interception": { "ca_dir": "\(caDirectory)" },
          "connect_ports": [443],
        """
        proxy = try world.startProxy()

        // The same configuration with unlisted hosts denied, on ports and a log of its own.
        var denying = world.configuration
        denying.violationLog = world.directory.file("denying-violations.jsonl")
        denying.extra += #"  "default_policy": "deny","#
        denyingProxy = try ProxyUnderTest(configuration: denying, forwardPort: ToolPaths.freePort(),
                                          gatewayPort: ToolPaths.freePort(), gatewayUpstream: TestWorld.apiAuthority)
    }

    /// Where `payload` is at `host`: upstream.py's `/bytes/N`, or a repository of the git server.
    func url(_ payload: Payload, at host: String) -> String {
        switch origin {
        case .bytes: "https://\(host)/bytes/\(payload.size)"
        case .git: "https://\(host)/\(GitOrigin.repository(for: payload)).git"
        }
    }

    /// The body a client must end up with for `payload`.
    func expectedBody(_ payload: Payload) throws -> BodyDigest {
        switch origin {
        case .bytes: return .pattern(payload.size)
        case .git:
            guard let gitOrigin else { throw TestFailure("a git world without its git origin") }
            return try gitOrigin.payloadDigest(payload)
        }
    }
}

/// Where the client runtimes are, and the environment every client runs in.
/// A runtime that is missing makes its suite a skipped one that says so.
enum ClientRuntime {
    /// The first executable `tool` on PATH or in the usual system folders.
    static func find(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin"]
        return folders.map { $0 + "/" + tool }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// What a shell user would export to send a program through the forward
    /// listener; the no-proxy lists are emptied so the runner's own cannot
    /// exempt a test name.
    static func proxyEnvironment(port: UInt16) -> [String: String] {
        let proxy = "http://127.0.0.1:\(port)"
        return ["https_proxy": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy, "HTTP_PROXY": proxy,
                "no_proxy": "", "NO_PROXY": "", "all_proxy": "", "ALL_PROXY": ""]
    }

    /// The first line of a program's own words, trimmed (for messages).
    static func firstLine(_ text: String) -> String {
        text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    }
}

import Foundation

/// A validated, immutable configuration (SPEC §2). Built only by
/// `ConfigurationLoader` (from a file) or `Configuration.builtInDefaults`.
public struct Configuration: Sendable {
    public var listeners: [ListenerConfiguration]
    public var violationLogPath: String
    /// nil = OpenSSL's default verify paths.
    public var trustStorePath: String?
    public var policies: PolicyTable
    /// `resolve`: "host:port" → address to connect to instead of resolving (like curl --resolve).
    public var resolveOverrides: [Endpoint: Endpoint]
    public var timeouts: Timeouts
    public var limits: Limits
    /// Event loops to run; 0 in the file means one per core, resolved here to a concrete count.
    public var threads: Int
    /// Identical violation events written in full per key per minute (`log_burst`).
    public var logBurst: Int
    /// `upstream_reuse`: keep-alive pool size and TLS session resumption.
    public var upstreamReuse = UpstreamReuse()
    /// `interception`; nil when absent.
    public var interception: Interception?
    /// `connect_ports`: the ports a CONNECT may name (SPEC §3.1); others get 403.
    public var connectPorts: Set<UInt16> = [443]
    /// The file this configuration was read from (`<text>`, `<built-in defaults>`).
    public var source = "<built-in defaults>"
    /// Every member that names a file, for messages about the file's contents.
    public var fileReferences: [FileReference] = []
    /// `admin` (SPEC §6): where `/metrics` and `/status` are served; nil when absent.
    public var admin: AdminListener?
    /// `access_log` (SPEC §6): one JSON line per exchange or CONNECT; nil when absent.
    public var accessLogPath: String?
    /// Where rules with `"pins": "learn"` keep what they learned (SPEC §2.1):
    /// `$STATE_DIRECTORY/learned-pins.json`, else `./learned-pins.json`. Not a
    /// key of the file: it is state, like the CA, not configuration.
    public var learnedPinsPath = "./" + LearnedPins.fileName

    public init(listeners: [ListenerConfiguration],
                violationLogPath: String,
                trustStorePath: String? = nil,
                policies: PolicyTable = PolicyTable(),
                resolveOverrides: [Endpoint: Endpoint] = [:],
                timeouts: Timeouts = Timeouts(),
                limits: Limits = Limits(),
                threads: Int = 1,
                logBurst: Int = 10) {
        self.listeners = listeners
        self.violationLogPath = violationLogPath
        self.trustStorePath = trustStorePath
        self.policies = policies
        self.resolveOverrides = resolveOverrides
        self.timeouts = timeouts
        self.limits = limits
        self.threads = threads
        self.logBurst = logBurst
    }
}

/// A host (name or IP literal) and a TCP port.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    public var host: HostName
    public var port: UInt16
    public init(host: HostName, port: UInt16) { self.host = host; self.port = port }
    /// `host:port`, with brackets around IPv6 literals.
    public var description: String { host.isIPv6 ? "[\(host.value)]:\(port)" : "\(host.value):\(port)" }
}

/// One listening socket and what it does with requests.
public struct ListenerConfiguration: Sendable, Hashable {
    public enum Mode: Sendable, Hashable {
        /// HTTP proxy: absolute-form requests, or origin-form with Host.
        case forward
        /// Every request goes to this fixed upstream.
        case gateway(upstream: Endpoint)
    }
    public var address: Endpoint
    public var mode: Mode
    public var allowRemote: Bool
    public init(address: Endpoint, mode: Mode, allowRemote: Bool = false) {
        self.address = address
        self.mode = mode
        self.allowRemote = allowRemote
    }
}

/// `admin` (SPEC §6): the loopback listener of `/metrics` and `/status`.
public struct AdminListener: Sendable, Hashable {
    public var address: Endpoint
    public var allowRemote: Bool
    public init(address: Endpoint, allowRemote: Bool = false) {
        self.address = address
        self.allowRemote = allowRemote
    }
}

/// SPEC §2 `timeouts`, plus `shutdown` (SPEC §5).
public struct Timeouts: Sendable, Hashable {
    public var connect: Duration = .seconds(5)
    public var handshake: Duration = .seconds(10)
    public var requestHeader: Duration = .seconds(15)
    public var idle: Duration = .seconds(60)
    public var shutdown: Duration = .seconds(10)
    /// A blind CONNECT tunnel with no byte either way for this long is closed (SPEC §3.1).
    public var tunnelIdle: Duration = .seconds(300)
    public init() {}
}

/// `interception` (SPEC §3.1): where the local CA that issues certificates
/// for intercepted CONNECT hosts lives. Absent: listed hosts are not served
/// over CONNECT (403), pinned traffic is never tunnelled blind.
public struct Interception: Sendable, Hashable {
    /// `ca_dir`: mode 0700, the keys in it 0600.
    public var caDirectory: String
    public init(caDirectory: String) { self.caDirectory = caDirectory }
}

/// `upstream_reuse` (not in SPEC §2, which only says connections are pooled
/// and sessions resumed): the knobs nginx has as `keepalive` and
/// `proxy_ssl_session_reuse`, and HAProxy as `http-reuse` and `no-ssl-reuse`.
public struct UpstreamReuse: Sendable, Hashable {
    /// Idle verified connections kept per upstream host and event loop; 0
    /// closes each upstream connection after its one exchange.
    public var idlePerHost: Int = 512
    /// Resume TLS sessions. false makes every new upstream connection a full
    /// handshake, so the policy is evaluated on every connection, not only on
    /// the one that made the session.
    public var tlsSessions: Bool = true
    public init() {}
}

/// SPEC §2 `limits`.
public struct Limits: Sendable, Hashable {
    public var maxHeaderBytes: Int = 65536
    public var maxConnections: Int = 10000
    /// Longest request target accepted before answering 414.
    public var maxRequestTargetBytes: Int = 8192
    /// `custom_checks`: custom-policy commands running at once, process-wide (SPEC §2.1).
    public var customChecks: Int = 16
    public init() {}
}

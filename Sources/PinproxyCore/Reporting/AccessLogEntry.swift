import Foundation

/// One line of `access_log` (SPEC §6): one exchange, or one CONNECT. Never
/// the query string, headers or bodies: the target is not logged at all
/// (the path alone can carry secrets), only method, host and port.
public struct AccessLogEntry: Sendable, Hashable {
    /// How the request reached pinproxy: `http` (a plain request), `connect`
    /// (a CONNECT itself: its 200 opened a tunnel or an interception, or it
    /// was refused), `intercepted` (a request inside an intercepted CONNECT).
    public enum Transport: String, Sendable, Hashable {
        case http, connect, intercepted
    }

    /// Where the exchange's upstream connection came from.
    public enum Upstream: String, Sendable, Hashable {
        /// None was used (refused, failed, or a blind tunnel's TCP connection).
        case none
        /// A new TLS connection with a full handshake.
        case new
        /// A new TLS connection that resumed a session.
        case resumed
        /// An idle verified connection from the pool.
        case reused
        /// A blind tunnel's TCP connection.
        case tunnel
    }

    public var time: Date
    public var clientAddress: String
    public var listener: String
    public var transport: Transport
    public var method: String
    public var host: String
    public var port: UInt16
    /// The `hosts` key or `default_policy`.
    public var rule: String
    /// The final status sent to the client; 0 when none was (the client left, or a response was cut).
    public var status: Int
    /// Body bytes relayed client → upstream and upstream → client (for a tunnel: all bytes each way).
    public var bytesUp: UInt64
    public var bytesDown: UInt64
    public var duration: Duration
    public var upstream: Upstream

    public init(time: Date, clientAddress: String, listener: String, transport: Transport, method: String, host: String,
                port: UInt16, rule: String, status: Int, bytesUp: UInt64, bytesDown: UInt64, duration: Duration,
                upstream: Upstream) {
        self.time = time
        self.clientAddress = clientAddress
        self.listener = listener
        self.transport = transport
        self.method = method
        self.host = host
        self.port = port
        self.rule = rule
        self.status = status
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
        self.duration = duration
        self.upstream = upstream
    }

    /// The JSON line, keys in this order, ending in "\n".
    public func jsonLine() -> [UInt8] {
        var json = JSONLineWriter(capacity: 320)
        json.beginObject()
        json.key("time"); json.string(RFC3339Timestamp.milliseconds(time))
        json.key("client_address"); json.string(clientAddress)
        json.key("listener"); json.string(listener)
        json.key("client_transport"); json.string(transport.rawValue)
        json.key("method"); json.string(method)
        json.key("host"); json.string(host)
        json.key("port"); json.integer(Int(port))
        json.key("rule"); json.string(rule)
        json.key("status"); json.integer(status)
        json.key("bytes_up"); json.integer(Int(clamping: bytesUp))
        json.key("bytes_down"); json.integer(Int(clamping: bytesDown))
        let (seconds, attoseconds) = duration.components
        json.key("duration_ms"); json.integer(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        json.key("upstream"); json.string(upstream.rawValue)
        json.endObject()
        return json.bytes + [UInt8(ascii: "\n")]
    }
}

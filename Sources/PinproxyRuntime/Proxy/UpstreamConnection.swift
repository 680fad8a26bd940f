import Foundation
import PinproxyCore

/// What a pooled connection is keyed by: a connection (and a TLS session) is
/// reused only for the same host and port under the same rule of the same
/// configuration generation that verified it.
///
/// The pool is consulted twice per request; the hash of the two strings is
/// computed once, when the key is made, not on every dictionary probe. An
/// immutable object rather than a struct: an exchange, its connection and
/// the pool pass the key around, and a struct's copy retained and released
/// both strings every time (some 500 instructions a request); a gateway's
/// every exchange gets the same instance (`UpstreamPool.key`), so equality
/// is mostly identity.
final class PoolKey: Hashable, Sendable {
    let host: HostName
    let port: UInt16
    let rule: String
    let generation: Int
    private let precomputedHash: Int

    init(host: HostName, port: UInt16, rule: String, generation: Int) {
        self.host = host
        self.port = port
        self.rule = rule
        self.generation = generation
        var hasher = Hasher()
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(rule)
        hasher.combine(generation)
        precomputedHash = hasher.finalize()
    }

    static func == (lhs: PoolKey, rhs: PoolKey) -> Bool {
        lhs === rhs || lhs.precomputedHash == rhs.precomputedHash && lhs.port == rhs.port && lhs.generation == rhs.generation
            && lhs.host == rhs.host && lhs.rule == rhs.rule
    }

    func hash(into hasher: inout Hasher) { hasher.combine(precomputedHash) }

    /// The upstream this key connects to.
    var endpoint: Endpoint { Endpoint(host: host, port: port) }

    /// The same host, port and rule under `generation` (a reload that
    /// verifies them alike: `ActiveConfiguration.verifiesAlike`).
    func renewed(generation: Int) -> PoolKey {
        PoolKey(host: host, port: port, rule: rule, generation: generation)
    }
}

/// Receives an upstream connection's I/O while a client exchange owns it.
protocol UpstreamConnectionDelegate: AnyObject {
    func upstreamDidRead(_ connection: UpstreamConnection)
    func upstreamDidDrain(_ connection: UpstreamConnection)
    func upstream(_ connection: UpstreamConnection, didEnd ending: StreamEnd)
}

/// A verified TLS connection to an upstream, in use by one exchange or idle in
/// the pool. Owns its stream (which owns the socket and the `SSL`) and the
/// handshake state the `SSL`'s callbacks point at, and frees the stream first.
final class UpstreamConnection: ByteStreamDelegate {
    let key: PoolKey
    let peer: SocketAddress
    let stream: TLSStream
    /// Kept alive as long as the `SSL`, whose ex_data points at it unretained;
    /// holds the handshake's one verdict.
    let handshake: UpstreamHandshake
    /// The session using this connection, or the pool holding it idle.
    /// Unowned (no side table on the session): a session sets it when it
    /// attaches and clears it when it lets go; the pool outlives its connections.
    unowned var delegate: UpstreamConnectionDelegate?
    /// Exchanges completed on this connection (0 = fresh from a handshake).
    var completedExchanges = 0
    /// `timeouts.idle` of the generation that made it: its read and write
    /// timeout in use and idle in the pool alike.
    let idleTimeout: EventTimeout

    init(key: PoolKey, peer: SocketAddress, stream: TLSStream, handshake: UpstreamHandshake, idleTimeout: EventTimeout) {
        self.key = key
        self.peer = peer
        self.stream = stream
        self.handshake = handshake
        self.idleTimeout = idleTimeout
    }

    /// The stream went to the object `renewed` made.
    private var handedOver = false

    deinit {
        // Free the SSL (with its stream) before the handshake it points at.
        if !handedOver { stream.close() }
    }

    /// Takes over the stream's events from the connector once the handshake
    /// is done; from here on OpenSSL reads ahead (one `read(2)` per burst of
    /// records instead of two per record; `TLSStream` makes sure none waits).
    func didConnect() {
        stream.delegate = self
        stream.enableReadAhead()
        stream.setReadHighWatermark(RelayLimits.highWatermark)
        stream.setWriteTimeout(idleTimeout)
    }

    func close() { stream.close() }

    /// The same connection under `generation`'s key (a reload verified it
    /// alike): a new object takes the stream, the handshake and the delegate
    /// over, and this one is to be dropped. A new object rather than a
    /// mutable key: the pool reads the key of every connection it parks, and
    /// a `var` there cost 150 instructions a request (`bench/request-cost.sh`).
    func renewed(generation: Int) -> UpstreamConnection {
        let renewed = UpstreamConnection(key: key.renewed(generation: generation), peer: peer, stream: stream,
                                         handshake: handshake, idleTimeout: idleTimeout)
        renewed.completedExchanges = completedExchanges
        renewed.delegate = delegate
        if stream.delegate === self { stream.delegate = renewed }
        handedOver = true
        return renewed
    }

    var isOpen: Bool { stream.isOpen }

    func streamDidRead(_ stream: ByteStream) { delegate?.upstreamDidRead(self) }
    func streamDidDrain(_ stream: ByteStream) { delegate?.upstreamDidDrain(self) }
    func stream(_ stream: ByteStream, didEnd ending: StreamEnd) { delegate?.upstream(self, didEnd: ending) }
}

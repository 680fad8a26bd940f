import Foundation
import PinproxyCore

/// What a pooled connection is keyed by: a connection (and a TLS session) is
/// reused only for the same host and port under the same rule of the same
/// configuration generation that verified it.
///
/// The pool is consulted twice per request; the hash of the two strings is
/// computed once, when the key is made, not on every dictionary probe.
struct PoolKey: Hashable {
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
        lhs.precomputedHash == rhs.precomputedHash && lhs.port == rhs.port && lhs.generation == rhs.generation
            && lhs.host == rhs.host && lhs.rule == rhs.rule
    }

    func hash(into hasher: inout Hasher) { hasher.combine(precomputedHash) }
}

/// Receives an upstream connection's I/O while a client exchange owns it.
protocol UpstreamConnectionDelegate: AnyObject {
    func upstreamDidRead(_ connection: UpstreamConnection)
    func upstreamDidWrite(_ connection: UpstreamConnection)
    func upstream(_ connection: UpstreamConnection, didReport events: BufferEventEvents)
}

/// A verified TLS connection to an upstream, in use by one exchange or idle in
/// the pool. Owns its bufferevent (which owns the socket and the `SSL`) and
/// the handshake state the `SSL`'s verify callback points at.
final class UpstreamConnection: BufferEventDelegate {
    let key: PoolKey
    let peer: SocketAddress
    let bufferEvent: BufferEvent
    /// Kept alive as long as the `SSL`, whose ex_data points at it unretained.
    let handshake: UpstreamHandshake
    /// The session using this connection, or the pool holding it idle.
    /// Unowned (no side table on the session, see `BufferEvent.delegate`):
    /// a session sets it when it attaches and clears it when it lets go
    /// (`finishIfDone`, `Exchange.abandonUpstream`); the pool outlives its connections.
    unowned var delegate: UpstreamConnectionDelegate?
    /// Exchanges completed on this connection (0 = fresh from a handshake).
    var completedExchanges = 0

    init(key: PoolKey, peer: SocketAddress, bufferEvent: BufferEvent, handshake: UpstreamHandshake) {
        self.key = key
        self.peer = peer
        self.bufferEvent = bufferEvent
        self.handshake = handshake
        bufferEvent.delegate = self
        // One read(2) per burst of records instead of two per record
        // (`BufferEvent` makes sure none is left waiting).
        bufferEvent.enableTLSReadAhead()
    }

    deinit {
        // Free the SSL (through its bufferevent) before the handshake it points at.
        bufferEvent.free()
    }

    func close() { bufferEvent.free() }

    var isOpen: Bool { bufferEvent.isOpen }

    func bufferEventDidRead(_ event: BufferEvent) { delegate?.upstreamDidRead(self) }
    func bufferEventDidWrite(_ event: BufferEvent) { delegate?.upstreamDidWrite(self) }
    func bufferEvent(_ event: BufferEvent, didReport events: BufferEventEvents) {
        delegate?.upstream(self, didReport: events)
    }
}

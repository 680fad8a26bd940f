internal import CLibevent
import Foundation

/// Socket options pinproxy sets, in one place.
enum SocketOptions {
    /// Heads and small bodies go out at once instead of waiting for Nagle's
    /// algorithm to coalesce them (a request-response proxy never benefits).
    static func disableNagle(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A client's connection reaches accept(2) only once its first bytes are
    /// in, or a second after its handshake if none come (nginx's `deferred`,
    /// HAProxy's `defer-accept`; TCP_DEFER_ACCEPT, in seconds). A client
    /// sends its request right behind the handshake, so the accept finds it
    /// there: no wait for readiness and no extra loop pass per connection,
    /// and a connection that stays silent takes no descriptor meanwhile.
    /// Returns how long the kernel holds a silent connection, as it reports
    /// the option back (its whole number of SYN-ACK retransmissions), or zero
    /// when the option could not be set.
    static func deferAcceptUntilData(_ fd: Int32) -> Duration {
        var seconds: Int32 = 1
        guard setsockopt(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            return .zero
        }
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, &length) == 0 else { return .zero }
        return .seconds(max(0, seconds))
    }

    /// The answer acknowledges a new connection's request; the kernel sends
    /// no bare ACK for it first (HAProxy's `tcp-smart-accept`, set by default
    /// on its HTTP listeners). Set on a listening socket, delayed-ACK
    /// ("pingpong") mode is copied into every socket accepted from it. Without
    /// it, Linux keeps a new connection in quick-ACK mode until it has
    /// answered a few times and acknowledges the first request as soon as it
    /// is read: one segment more for every connection, which for a
    /// `Connection: close` request is one in twelve. An answer slower than the
    /// delayed-ACK timer (40 ms at least) gets its ACK from the timer, as every
    /// later request of a kept-alive connection already does.
    static func delayAcknowledgements(_ fd: Int32) {
        var zero: Int32 = 0
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &zero, socklen_t(MemoryLayout<Int32>.size))
    }

    /// `close` sends a reset and drops unsent bytes, instead of a FIN after
    /// them (SO_LINGER on, with a zero timeout): the one signal a peer
    /// reading up to the close gets that the connection was cut.
    static func resetOnClose(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Drops what the peer has sent so far, unread (`MSG_TRUNC` on TCP
    /// discards without copying, tcp(7)): a close with received bytes unread
    /// sends a reset, which can take an answer written just before it along.
    /// For a socket closed at once after a short answer; bytes arriving after
    /// the close still meet a reset (`ClientSession` closes in stages instead).
    static func discardReceived(_ fd: Int32) {
        var calls = 0
        while calls < 4, recv(fd, nil, 1 << 20, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC)) > 0 { calls += 1 }
    }

    /// A restarted daemon may bind while old connections linger in TIME_WAIT;
    /// on Linux this never lets two sockets listen on one address.
    static func allowAddressReuse(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// An IPv6 listener takes IPv6 only: `[::]:8080` does not also claim `0.0.0.0:8080`.
    static func restrictToIPv6(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Blocking reads and writes give up after `timeout` (`pinproxy pins`' one-shot fetch).
    static func setBlockingTimeouts(_ fd: Int32, _ timeout: Duration) {
        var interval = timeval(duration: timeout)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }
}

// Socket constants (SOCK_STREAM, MSG_NOSIGNAL …) through the libevent
// module, whose shim includes the libc socket headers first: which C module
// owns those declarations depends on how a build batches its files, and
// through Foundation alone they were missing in some builds.
internal import CLibevent
import Foundation

/// One listening TCP socket of the process, owned: bound once for a listen
/// address (or adopted from socket activation) and shared by every event loop,
/// each of which accepts on its own duplicate of the descriptor (`Listener`).
///
/// Bound without `SO_REUSEPORT`, so the address belongs to this process: a
/// second pinproxy (a forgotten test instance with weaker pins) that tries to
/// bind it fails with "Address already in use", as nginx and HAProxy do,
/// instead of silently taking a share of the connections (SPEC §5). The
/// kernel socket stays open while this object or any loop's duplicate does.
final class ListeningSocket {
    private(set) var descriptor: Int32
    /// The address actually bound (the port resolved when the config said 0).
    let boundAddress: SocketAddress
    /// How long the kernel holds a connection that sends nothing before
    /// handing it to accept(2) (`deferAcceptUntilData`); zero when it does not.
    private(set) var acceptDeferral: Duration = .zero

    /// The kernel's queues for connections not accepted yet: handshakes
    /// (with the accept deferred, until the first bytes come) and complete
    /// connections. Past it, new clients get SYN cookies, and a connection
    /// that completes while the accept queue is full is dropped and waits
    /// for a retransmission: the client's data after 200 ms or more, the
    /// SYN-ACK after a second or more. 4096 takes a burst of thousands of
    /// clients at once (four 5,000-connection bursts overflowed a queue of
    /// 1024 799 times, one of 4096 never); Linux caps it at
    /// `net.core.somaxconn`, 4096 by default since 5.4.
    static let backlog: Int32 = 4096

    /// Binds `address` (`SO_REUSEADDR`; IPv6 sockets IPv6-only: `SocketOptions`).
    static func bind(_ address: SocketAddress) throws -> ListeningSocket {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RuntimeError.bind(address.description, errno) }
        SocketOptions.allowAddressReuse(fd)
        if address.family == AF_INET6 { SocketOptions.restrictToIPv6(fd) }
        let bound = address.withSockaddr { Glibc.bind(fd, $0, $1) }
        guard bound == 0, listen(fd, backlog) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RuntimeError.bind(address.description, code)
        }
        return ListeningSocket(adopting: fd)
    }

    /// Takes ownership of an already listening descriptor (socket activation).
    /// Nagle is disabled on it: Linux copies TCP_NODELAY into every socket
    /// accepted from it, which saves one setsockopt(2) per client connection.
    init(adopting descriptor: Int32) {
        self.descriptor = descriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        SocketOptions.disableNagle(descriptor)
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        boundAddress = SocketAddress(storage: bound, length: length)
    }

    deinit { close() }

    /// Has the kernel hand over a connection once its first bytes are in
    /// (`SocketOptions.deferAcceptUntilData`), for clients that speak first.
    func deferAcceptUntilData() {
        acceptDeferral = SocketOptions.deferAcceptUntilData(descriptor)
    }

    /// Leaves the acknowledgement of an accepted connection's request to the
    /// answer (`SocketOptions.delayAcknowledgements`), for clients whose
    /// request is answered.
    func delayAcknowledgements() {
        SocketOptions.delayAcknowledgements(descriptor)
    }

    /// A new descriptor for the same socket, close-on-exec, that the caller
    /// owns (a loop's `Listener` closes it when it is freed).
    func duplicate() throws -> Int32 {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw RuntimeError.system("dup listening socket \(boundAddress)", errno) }
        return copy
    }

    /// Closes this process's own descriptor (loops may still hold duplicates). Idempotent.
    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

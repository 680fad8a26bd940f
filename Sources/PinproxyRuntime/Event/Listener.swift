internal import CLibevent
import Foundation

/// Accepting on one event loop (`evconnlistener`), owned.
///
/// Every loop accepts on its own duplicate of the process's one socket per
/// address (`ListeningSocket`): each loop's epoll sees the socket readable and
/// the first loop to call accept(2) takes the connection, so connections go
/// to loops that are free to take them. When accept fails for lack of
/// descriptors (EMFILE/ENFILE) the listener pauses for a second instead of
/// spinning on a readable socket it cannot drain.
final class Listener {
    private var listener: OpaquePointer?
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop
    private let onAccept: (Int32, SocketAddress) -> Void
    private let onError: (Int32) -> Void
    private var resumeTimer: Timer?
    /// The address the socket is bound to.
    let boundAddress: SocketAddress

    /// Accepts on `descriptor` (a listening socket this object takes
    /// ownership of: closed when the listener is freed, also if init fails).
    init(loop: EventLoop, descriptor fd: Int32, boundAddress: SocketAddress,
         onAccept: @escaping (Int32, SocketAddress) -> Void, onError: @escaping (Int32) -> Void) throws {
        self.onAccept = onAccept
        self.loop = loop
        self.onError = onError
        self.boundAddress = boundAddress
        _ = evutil_make_socket_nonblocking(fd)
        // Context: unretained self; the listener is freed in deinit/close, before self.
        listener = evconnlistener_new(loop.base, Listener.acceptTrampoline, Unmanaged.passUnretained(self).toOpaque(),
                                      UInt32(LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC), 0, fd)
        guard listener != nil else {
            Glibc.close(fd)
            throw RuntimeError.system("evconnlistener_new", errno)
        }
        evconnlistener_set_error_cb(listener, Listener.errorTrampoline)
        resumeTimer = Timer(loop: loop) { [unowned self] in self.resume() }
    }

    deinit { close() }

    /// Stops accepting and closes this loop's descriptor (the socket itself
    /// closes with the last one). Established connections are unaffected.
    func close() {
        if let listener { evconnlistener_free(listener) }
        listener = nil
        resumeTimer?.cancel()
    }

    func pause() { if let listener { evconnlistener_disable(listener) } }
    func resume() { if let listener { evconnlistener_enable(listener) } }

    private static let acceptTrampoline: evconnlistener_cb = { _, fd, address, length, context in
        guard let context, let address else { Glibc.close(fd); return }
        let listener = Unmanaged<Listener>.fromOpaque(context).takeUnretainedValue()
        guard let peer = SocketAddress(address, length: socklen_t(length)) else { Glibc.close(fd); return }
        listener.onAccept(fd, peer)
    }

    private static let errorTrampoline: evconnlistener_errorcb = { _, context in
        guard let context else { return }
        Unmanaged<Listener>.fromOpaque(context).takeUnretainedValue().didFailToAccept(errno)
    }

    private func didFailToAccept(_ code: Int32) {
        onError(code)
        if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
            pause()
            resumeTimer?.schedule(after: .seconds(1))
        }
    }
}

internal import CLibevent
import Foundation

/// A listening TCP socket on one event loop (`evconnlistener`), owned.
///
/// Every loop binds its own socket with `SO_REUSEPORT`, so the kernel spreads
/// connections across loops without a shared accept lock. When accept fails
/// for lack of descriptors (EMFILE/ENFILE) the listener pauses for a second
/// instead of spinning on a readable socket it cannot drain.
final class Listener {
    private var listener: OpaquePointer?
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop
    private let onAccept: (Int32, SocketAddress) -> Void
    private let onError: (Int32) -> Void
    private var resumeTimer: Timer?
    /// The address actually bound (useful when the configured port was 0).
    let boundAddress: SocketAddress

    /// Binds `address` (or adopts an inherited listening descriptor).
    init(loop: EventLoop, address: SocketAddress, inheritedDescriptor: Int32? = nil,
         onAccept: @escaping (Int32, SocketAddress) -> Void, onError: @escaping (Int32) -> Void) throws {
        self.onAccept = onAccept
        self.loop = loop
        self.onError = onError
        let fd = try inheritedDescriptor ?? Listener.bind(address)
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        boundAddress = SocketAddress(storage: bound, length: length)
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

    /// Stops accepting and closes the socket. Established connections are unaffected.
    func close() {
        if let listener { evconnlistener_free(listener) }
        listener = nil
        resumeTimer?.cancel()
    }

    func pause() { if let listener { evconnlistener_disable(listener) } }
    func resume() { if let listener { evconnlistener_enable(listener) } }

    static func bind(_ address: SocketAddress) throws -> Int32 {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RuntimeError.bind(address.description, errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSockaddr { Glibc.bind(fd, $0, $1) }
        guard bound == 0, listen(fd, 1024) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RuntimeError.bind(address.description, code)
        }
        return fd
    }

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

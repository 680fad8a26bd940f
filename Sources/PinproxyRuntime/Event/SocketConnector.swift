internal import CLibevent
import Foundation

/// One non-blocking TCP connect with a timeout, reported once.
///
/// Done by hand so that a refused or timed-out connect is told apart from a
/// TLS failure: the TLS stream is created only on an established socket.
final class SocketConnector {
    enum Failure: Error, Equatable {
        case refused(Int32)
        case timedOut
    }

    private var event: OpaquePointer?
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop
    private var descriptor: Int32 = -1
    private var completion: ((Result<Int32, Failure>) -> Void)?

    /// Starts connecting; `completion` runs on the loop, never synchronously.
    init(loop: EventLoop, address: SocketAddress, timeout: Duration,
         completion: @escaping (Result<Int32, Failure>) -> Void) {
        self.completion = completion
        self.loop = loop
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var errorCode: Int32 = 0
        if fd < 0 {
            errorCode = errno
        } else {
            descriptor = fd
            SocketOptions.disableNagle(fd)
            let result = address.withSockaddr { connect(fd, $0, $1) }
            if result != 0 && errno != EINPROGRESS { errorCode = errno }
        }
        // Context: unretained self; the event is freed in finish()/deinit.
        // With a pending error the event fires at once (EV_WRITE on a failed
        // socket is ready), so completion is still never synchronous.
        event = event_new(loop.base, descriptor, EventFlags.write, SocketConnector.trampoline,
                          Unmanaged.passUnretained(self).toOpaque())
        if errorCode != 0 || descriptor < 0 {
            let failed = errorCode
            self.pendingError = failed == 0 ? ECONNREFUSED : failed
            event_active(event, EventFlags.activeWrite, 0)
        } else {
            var tv = timeval(duration: timeout)
            event_add(event, &tv)
        }
    }

    private var pendingError: Int32 = 0

    deinit { cancel() }

    /// Abandons the attempt: the completion never runs, the socket is closed.
    func cancel() {
        completion = nil
        if let event { event_free(event) }
        event = nil
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    private static let trampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        Unmanaged<SocketConnector>.fromOpaque(context).takeUnretainedValue().didFire(what)
    }

    private func didFire(_ what: Int16) {
        var code = pendingError
        if code == 0 {
            if EventFlags.timedOut(what) {
                finish(.failure(.timedOut))
                return
            }
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        }
        if code != 0 {
            finish(.failure(.refused(code)))
        } else {
            let fd = descriptor
            descriptor = -1   // handed to the caller
            finish(.success(fd))
        }
    }

    private func finish(_ result: Result<Int32, Failure>) {
        let completion = self.completion
        cancel()
        completion?(result)
    }
}

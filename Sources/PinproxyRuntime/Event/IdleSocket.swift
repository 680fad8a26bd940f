internal import CLibevent
import Foundation

/// Receives what an `IdleSocket` waited for.
protocol IdleSocketDelegate: AnyObject {
    /// Bytes (or the peer's close) arrived, or `timedOut` when the wait ran out first.
    func idleSocketDidFire(_ socket: IdleSocket, timedOut: Bool)
}

/// An accepted connection that has sent nothing yet, waiting as one libevent
/// `event` (readable, or a timeout) and this object: a silent connection (a
/// client's pre-opened pool, a scanner) costs a few hundred bytes instead of
/// a whole session (`bench/run.sh --memory`).
///
/// Owns the socket until `handOver()` gives it to a stream; `close()`, or
/// deinit, closes it otherwise. The event's callback only forwards to the delegate.
final class IdleSocket {
    /// The delegate outlives the wait: it frees this object (or hands it over) when told.
    unowned let delegate: IdleSocketDelegate
    private var descriptor: Int32
    private var event: OpaquePointer?

    /// Takes ownership of `descriptor` and waits up to `timeout` for it to become readable.
    init(loop: EventLoop, descriptor: Int32, timeout: Duration, delegate: IdleSocketDelegate) {
        self.descriptor = descriptor
        self.delegate = delegate
        // Context: unretained self; the event is freed before self goes away
        // (`handOver`, `close`, deinit), so the callback never outlives it.
        event = event_new(loop.base, descriptor, EventFlags.read, IdleSocket.trampoline,
                          Unmanaged.passUnretained(self).toOpaque())
        var value = timeval(duration: timeout)
        if let event { event_add(event, &value) }
    }

    deinit { close() }

    /// False when libevent could not allocate the event.
    var isWaiting: Bool { event != nil }

    /// Stops waiting and gives up the socket (to a stream, which closes it).
    func handOver() -> Int32 {
        freeEvent()
        defer { descriptor = -1 }
        return descriptor
    }

    /// Stops waiting and closes the socket. Idempotent.
    func close() {
        freeEvent()
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    private func freeEvent() {
        if let event { event_free(event) }
        event = nil
    }

    private static let trampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        let socket = Unmanaged<IdleSocket>.fromOpaque(context).takeUnretainedValue()
        withExtendedLifetime(socket) { socket.delegate.idleSocketDidFire(socket, timedOut: EventFlags.timedOut(what)) }
    }
}

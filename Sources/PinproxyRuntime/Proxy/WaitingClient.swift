internal import CLibevent
import Foundation

/// An accepted client connection that has not sent a byte yet.
///
/// Most of a session's memory is libevent's bufferevent (its two evbuffers
/// and two events) and the session: about 1.6 KiB per connection
/// (`bench/run.sh --memory`). A connection opened and left silent (a client's
/// pre-opened pool, a scanner, a slow client) needs none of that. It waits as
/// one libevent `event` (readable, or the request-header timeout counted from
/// accept) and this object, and becomes a `ClientSession` when its first
/// bytes arrive.
///
/// Owns the socket until `handOver()` gives it to a bufferevent; `close()`,
/// or deinit, closes it otherwise.
final class WaitingClient {
    let peer: SocketAddress
    let listener: ListenerContext
    /// When the request-header timeout runs out (it starts at accept).
    let headDeadline: ContinuousClock.Instant
    private unowned let worker: LoopWorker
    private var descriptor: Int32
    private var event: OpaquePointer?

    /// Takes ownership of `descriptor`.
    init(worker: LoopWorker, descriptor: Int32, peer: SocketAddress, listener: ListenerContext, headTimeout: Duration) {
        self.worker = worker
        self.descriptor = descriptor
        self.peer = peer
        self.listener = listener
        headDeadline = .now + headTimeout
        // Context: unretained self; the event is freed before self goes away
        // (`handOver`, `close`, deinit), so the callback never outlives it.
        event = event_new(worker.loop.base, descriptor, EventFlags.read, WaitingClient.trampoline,
                          Unmanaged.passUnretained(self).toOpaque())
        var timeout = timeval(duration: headTimeout)
        if let event { event_add(event, &timeout) }
    }

    deinit { close() }

    /// False when libevent could not allocate the event.
    var isWaiting: Bool { event != nil }

    /// Stops waiting and gives up the socket (to a bufferevent, which closes it).
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

    private func didFire(timedOut: Bool) {
        if timedOut {
            worker.waitingClientTimedOut(self)
        } else {
            worker.waitingClientSentBytes(self)
        }
    }

    private static let trampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        Unmanaged<WaitingClient>.fromOpaque(context).takeUnretainedValue().didFire(timedOut: what & Int16(EV_TIMEOUT) != 0)
    }
}

internal import CLibevent
import Foundation

/// An accepted client connection that has not sent a byte yet.
///
/// Most of a session's memory is libevent's bufferevent (its two evbuffers
/// and two events), the session and its timer: about 1.6 KiB per connection
/// (`bench/run.sh --memory`). A connection opened and left silent (a client's
/// pre-opened pool, a scanner, a slow client) needs none of that. It waits as
/// one libevent `event` (readable, or the request-header timeout counted from
/// accept) and this object, and becomes a `ClientSession` when its first
/// bytes arrive.
final class WaitingClient {
    let descriptor: Int32
    let peer: SocketAddress
    let listener: ListenerContext
    /// When the request-header timeout runs out (it starts at accept).
    let headDeadline: ContinuousClock.Instant
    private unowned let worker: LoopWorker
    private var event: OpaquePointer?

    init(worker: LoopWorker, descriptor: Int32, peer: SocketAddress, listener: ListenerContext, headTimeout: Duration) {
        self.worker = worker
        self.descriptor = descriptor
        self.peer = peer
        self.listener = listener
        headDeadline = .now + headTimeout
        // Context: unretained self; the event is freed before self goes away (`stopWaiting`, deinit).
        event = event_new(worker.loop.base, descriptor, EventFlags.read, WaitingClient.trampoline,
                          Unmanaged.passUnretained(self).toOpaque())
        var timeout = timeval(duration: headTimeout)
        if let event { event_add(event, &timeout) }
    }

    deinit { stopWaiting() }

    /// False when libevent could not allocate the event (the caller closes the socket).
    var isWaiting: Bool { event != nil }

    /// Frees the event; the descriptor stays open (it is handed on or closed by the worker).
    func stopWaiting() {
        if let event { event_free(event) }
        event = nil
    }

    private static let trampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        let client = Unmanaged<WaitingClient>.fromOpaque(context).takeUnretainedValue()
        client.stopWaiting()
        if what & Int16(EV_TIMEOUT) != 0 {
            client.worker.waitingClientTimedOut(client)
        } else {
            client.worker.waitingClientSentBytes(client)
        }
    }
}

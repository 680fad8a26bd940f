internal import CLibevent
import Foundation

/// A one-shot timer on an event loop, re-armable. Owns its `event*`.
final class Timer {
    private var event: OpaquePointer?
    private let action: () -> Void
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop

    init(loop: EventLoop, action: @escaping () -> Void) {
        self.action = action
        self.loop = loop
        // Context: unretained self; the event is freed in deinit, so the callback
        // can never run after self is gone.
        event = shim_evtimer_new(loop.base, Timer.trampoline, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let event { event_free(event) }
    }

    private static let trampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        Unmanaged<Timer>.fromOpaque(context).takeUnretainedValue().action()
    }

    /// (Re)arms the timer to fire once after `delay`.
    func schedule(after delay: Duration) {
        var tv = timeval(duration: delay)
        shim_evtimer_add(event, &tv)
    }

    func cancel() {
        shim_evtimer_del(event)
    }
}

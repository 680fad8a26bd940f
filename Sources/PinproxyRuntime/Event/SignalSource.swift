internal import CLibevent
import Foundation

/// A persistent signal handler delivered on an event loop (libevent's
/// self-pipe), so reload and drain run as ordinary loop callbacks.
final class SignalSource {
    private var event: OpaquePointer?
    private let action: () -> Void
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop

    init(loop: EventLoop, signal: Int32, action: @escaping () -> Void) {
        self.action = action
        self.loop = loop
        // Context: unretained self; the event is freed in deinit.
        event = event_new(loop.base, signal, EventFlags.persistentSignal, SignalSource.trampoline,
                          Unmanaged.passUnretained(self).toOpaque())
        event_add(event, nil)
    }

    deinit {
        if let event { event_free(event) }
    }

    private static let trampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        Unmanaged<SignalSource>.fromOpaque(context).takeUnretainedValue().action()
    }
}

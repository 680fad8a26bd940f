internal import CLibevent

/// A persistent libevent event on a descriptor it does not own: `action`
/// runs each time the descriptor is readable (or writable) while armed. Used
/// for pipes and a pidfd, where a stream's buffers would only be in the way.
final class DescriptorWatch {
    private var event: OpaquePointer?
    private let action: () -> Void
    private var armed = false
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop

    /// Nil when libevent cannot allocate the event.
    init?(loop: EventLoop, descriptor: Int32, writable: Bool = false, action: @escaping () -> Void) {
        self.loop = loop
        self.action = action
        // Context: unretained self; the event is freed in deinit, so the
        // callback never runs after self is gone.
        event = event_new(loop.base, descriptor, writable ? EventFlags.persistentWrite : EventFlags.persistentRead,
                          DescriptorWatch.trampoline, Unmanaged.passUnretained(self).toOpaque())
        guard event != nil else { return nil }
    }

    deinit {
        if let event { event_free(event) }
    }

    private static let trampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        Unmanaged<DescriptorWatch>.fromOpaque(context).takeUnretainedValue().action()
    }

    func arm() {
        guard !armed, let event else { return }
        armed = event_add(event, nil) == 0
    }

    func disarm() {
        guard armed, let event else { return }
        event_del(event)
        armed = false
    }
}

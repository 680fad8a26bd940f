internal import CLibevent
import Foundation
import Synchronization

/// One libevent `event_base` and the thread that runs it.
///
/// Everything that touches a loop's objects runs on that loop's thread. Other
/// threads hand work over with `execute(_:)`, which queues a closure and wakes
/// the loop through a persistent user event (libevent's pthread locking is
/// switched on once per process for exactly this).
final class EventLoop: @unchecked Sendable {
    /// The `event_base*`, owned: freed in `deinit` after every event on it.
    let base: OpaquePointer
    private let mailbox = Mutex<[@Sendable () -> Void]>([])
    private var wakeup: OpaquePointer?

    private static let threadingEnabled: Bool = {
        evthread_use_pthreads() == 0
    }()

    init() throws {
        precondition(Self.threadingEnabled, "libevent pthread support is missing")
        guard let config = event_config_new() else { throw RuntimeError.system("event_config_new", errno) }
        defer { event_config_free(config) }
        guard let base = event_base_new_with_config(config) else { throw RuntimeError.system("event_base_new", errno) }
        self.base = base
        // Context: unretained self. The event is freed in deinit, before self is gone.
        wakeup = event_new(base, -1, Int16(EV_PERSIST), EventLoop.wakeupTrampoline,
                           Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let wakeup { event_free(wakeup) }
        event_base_free(base)
    }

    private static let wakeupTrampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        Unmanaged<EventLoop>.fromOpaque(context).takeUnretainedValue().didWake()
    }

    private func didWake() {
        let work = mailbox.withLock { queued -> [@Sendable () -> Void] in
            let taken = queued
            queued.removeAll()
            return taken
        }
        for item in work { item() }
    }

    /// Runs `work` on this loop's thread at its next turn. Safe from any thread.
    func execute(_ work: @escaping @Sendable () -> Void) {
        mailbox.withLock { $0.append(work) }
        if let wakeup { event_active(wakeup, Int32(EV_READ), 0) }
    }

    /// Runs the loop until `stop()` or until no events remain.
    /// The wakeup event is added here, not in init: a pending persistent event
    /// would keep the loop alive forever, which is what a daemon wants.
    func run() {
        if let wakeup { event_add(wakeup, nil) }
        event_base_dispatch(base)
    }

    /// Makes `run()` return after the current callbacks. Safe from any thread.
    func stop() {
        event_base_loopbreak(base)
    }
}

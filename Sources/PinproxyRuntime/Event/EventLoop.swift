internal import CLibevent
import Foundation

/// One libevent `event_base` and the thread that runs it.
///
/// Everything that touches a loop's objects runs on that loop's thread. Other
/// threads hand work over with `execute(_:)`, which queues a closure and wakes
/// the loop through an eventfd. libevent's own locking stays off: a base is
/// only ever used from its thread, and the mailbox has its own mutex, so the
/// hot path takes no lock at all.
final class EventLoop: @unchecked Sendable {
    /// The `event_base*`, owned: freed in `deinit` after every event on it.
    let base: OpaquePointer
    /// `Locked`, not `Mutex`: the sanitizer pass must see what orders the threads that post here.
    private let mailbox = Locked<[@Sendable () -> Void]>([])
    private let wakeupDescriptor: Int32
    private var wakeup: OpaquePointer?
    /// The writes this loop's streams leave for the end of the pass.
    let passEndWrites: PassEndWrites

    init() throws {
        guard let config = event_config_new() else { throw RuntimeError.system("event_config_new", errno) }
        defer { event_config_free(config) }
        // The changelist coalesces add/remove pairs within one loop turn into
        // a single epoll_ctl (a stream may stop and start reading within one callback).
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue) | Int32(EVENT_BASE_FLAG_NOLOCK.rawValue))
        guard let base = event_base_new_with_config(config) else { throw RuntimeError.system("event_base_new", errno) }
        self.base = base
        passEndWrites = PassEndWrites(base: base)
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else {
            passEndWrites.close()
            event_base_free(base)
            throw RuntimeError.system("eventfd", errno)
        }
        wakeupDescriptor = descriptor
        // Context: unretained self. The event is freed in deinit, before self is gone.
        wakeup = event_new(base, descriptor, EventFlags.persistentRead, EventLoop.wakeupTrampoline,
                           Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        passEndWrites.close()
        if let wakeup { event_free(wakeup) }
        close(wakeupDescriptor)
        event_base_free(base)
    }

    private static let wakeupTrampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        Unmanaged<EventLoop>.fromOpaque(context).takeUnretainedValue().didWake()
    }

    private func didWake() {
        var counter: UInt64 = 0
        _ = read(wakeupDescriptor, &counter, MemoryLayout<UInt64>.size)
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
        var one: UInt64 = 1
        _ = write(wakeupDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Runs the loop until `stop()`. The persistent wakeup event keeps it
    /// alive while idle, which is what a daemon wants.
    func run() {
        if let wakeup { event_add(wakeup, nil) }
        event_base_dispatch(base)
    }

    /// Makes `run()` return after the current callbacks. Call on the loop's
    /// thread (from another thread: `execute { loop.stop() }`).
    func stop() {
        event_base_loopbreak(base)
    }
}

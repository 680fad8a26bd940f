internal import CLibevent

/// The writes a loop pass leaves for its end: one per stream that flushed
/// during the pass (`StreamEvents.scheduleWrite`), run after every callback
/// epoll reported in that pass, so that what one pass sends leaves together
/// and a peer woken by the first write finds the others ready (one wakeup,
/// one `epoll_wait`, for several requests or answers). HAProxy sends once its
/// tasks have run, nginx runs its posted events after the I/O ones, for the
/// same reason. A plain stream may send a complete answer ahead of its entry
/// (`PlainStream.flushMessageEnd`) when what its pass does next is the
/// exchange's teardown, which the client need not wait for; the entry still
/// runs, for what the socket did not take and for the drain report.
///
/// One event for the whole loop, activated by the first write queued in a
/// pass (libevent appends it to the tail of the active queue it is running),
/// rather than each stream activating its own write event: that event also
/// carries a TLS stream's deferred reports (`activateWrite`), and one
/// activation serves every write of a busy pass. At one write per pass it is
/// no cheaper: batching the upstream side too cost +1,469 instructions per
/// keep-alive request this way and +1,027 with per-stream activations
/// (`bench/request-cost.sh`, each against its own build's unbatched figure);
/// the saving when a pass carries several writes has not been counted.
///
/// Holds its streams unretained: an entry exists while the stream's
/// `writeScheduled` is true, and `StreamEvents.close` (also run by its
/// deinit) takes the entry out before clearing it, so no entry outlives its
/// stream and no stream is kept alive by a pass that may never end (a loop
/// stopped mid-pass).
final class PassEndWrites {
    private var event: OpaquePointer?
    /// Queued during this pass, in order.
    private var queued: [Unmanaged<StreamEvents>?] = []
    /// Being run now (swapped out of `queued`, so writes queued by a callback
    /// of the run go to the next round of the same run).
    private var running: [Unmanaged<StreamEvents>?] = []
    private var activated = false

    init(base: OpaquePointer) {
        // Context: unretained self. The owner (`EventLoop`) calls `close`,
        // which frees the event, before the base or self goes away.
        event = event_new(base, -1, 0, PassEndWrites.trampoline, Unmanaged.passUnretained(self).toOpaque())
        queued.reserveCapacity(64)
        running.reserveCapacity(64)
    }

    /// Frees the event; what is queued is dropped. Call before the base is freed.
    func close() {
        if let event { event_free(event) }
        event = nil
        queued.removeAll()
        running.removeAll()
    }

    /// Runs `events`' scheduled write at the end of this pass. The caller
    /// guarantees one entry per stream (its `writeScheduled` flag).
    func enqueue(_ events: StreamEvents) {
        queued.append(Unmanaged.passUnretained(events))
        guard !activated, let event else { return }
        activated = true
        event_active(event, EventFlags.activeWrite, 0)
    }

    /// Takes `events`' entry out (a stream closing with a write still queued).
    func remove(_ events: StreamEvents) {
        let target = Unmanaged.passUnretained(events).toOpaque()
        for index in queued.indices where queued[index]?.toOpaque() == target { queued[index] = nil }
        for index in running.indices where running[index]?.toOpaque() == target { running[index] = nil }
    }

    private func run() {
        while !queued.isEmpty {
            swap(&queued, &running)
            var index = 0
            // By index, not by iterator: a write's callbacks may close a later
            // stream of this round, which empties its slot.
            while index < running.count {
                if let entry = running[index] {
                    // A strong reference for the call: the write's callbacks may
                    // release the stream's last other one.
                    let events = entry.takeUnretainedValue()
                    withExtendedLifetime(events) { events.runScheduledWrite() }
                }
                index += 1
            }
            running.removeAll(keepingCapacity: true)
        }
        activated = false
    }

    private static let trampoline: event_callback_fn = { _, _, context in
        guard let context else { return }
        Unmanaged<PassEndWrites>.fromOpaque(context).takeUnretainedValue().run()
    }
}

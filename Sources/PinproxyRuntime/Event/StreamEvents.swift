internal import CLibevent
import Foundation

/// Receives a `StreamEvents`' two callbacks: the stream that owns it.
protocol StreamEventsOwner: AnyObject {
    func eventsDidFireRead(timedOut: Bool)
    func eventsDidFireWrite(timedOut: Bool)
    /// Input the owner has read from the socket but not yet handed out (TLS
    /// records OpenSSL read ahead): the socket will not report it readable.
    var holdsUnreadInput: Bool { get }
}

/// What `PlainStream` and `TLSStream` share: the socket, its read and write
/// events (libevent, persistent, added and removed only when interest
/// changes), the input and output buffers, the timeouts and watermarks.
/// Owns the socket, both events and both buffers.
///
/// Reading pauses while the input holds the high watermark; a callback on the
/// input buffer, installed only then, resumes it once a consumer drains it
/// (consumers drain outside the stream's callbacks too: a relay moving
/// buffered body bytes once its upstream is ready).
final class StreamEvents {
    let input: EventBuffer
    let output: EventBuffer
    private(set) var descriptor: Int32
    /// Keeps the loop (its event_base) alive as long as the events.
    private let loop: EventLoop
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    private(set) var readTimeout: EventTimeout?
    var writeTimeout: EventTimeout?
    private(set) var readHighWatermark = Int.max
    var writeLowWatermark = 0
    /// Reading was asked for (and not stopped, nor ended by the peer).
    private var wantsReading = false
    private(set) var readArmed = false
    private(set) var writeArmed = false
    private var drainWatch: OpaquePointer?
    /// The write callback was run by hand (`activateWrite`), not by the socket.
    private(set) var hasPendingActivation = false
    /// A write is queued for the end of this loop pass (`scheduleWrite`):
    /// the loop's `PassEndWrites` holds an entry for this object exactly then.
    private(set) var writeScheduled = false
    /// The owner wrote some of the output before the scheduled write ran
    /// (`noteWriteAheadOfSchedule`): the scheduled write still calls the
    /// owner, for the rest and for the drain report, if the output is empty.
    private var wroteAheadOfSchedule = false
    /// The stream the callbacks go to. Unowned: the stream owns this object
    /// and closes it (freeing both events) before it goes away.
    private unowned var owner: StreamEventsOwner?

    /// Takes ownership of `descriptor` (closed by `close`, also when init fails).
    init?(loop: EventLoop, descriptor: Int32) {
        self.loop = loop
        self.descriptor = descriptor
        guard let inputBuffer = evbuffer_new(), let outputBuffer = evbuffer_new() else {
            Glibc.close(descriptor)
            return nil
        }
        input = EventBuffer(pointer: inputBuffer)
        output = EventBuffer(pointer: outputBuffer)
    }

    /// Creates the events with `owner` as their callbacks' target; false when
    /// libevent cannot. Once per object: a second pair would leak the first.
    @discardableResult
    func attach(to owner: StreamEventsOwner) -> Bool {
        precondition(readEvent == nil && writeEvent == nil, "StreamEvents attached twice")
        self.owner = owner
        // Context: unretained self. The owner closes this object (which frees
        // both events) before either goes away, so no callback outlives them.
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(loop.base, descriptor, EventFlags.persistentRead, StreamEvents.readTrampoline, context)
        writeEvent = event_new(loop.base, descriptor, EventFlags.persistentWrite, StreamEvents.writeTrampoline, context)
        guard readEvent != nil, writeEvent != nil else { close(); return false }
        return true
    }

    deinit {
        close()
        evbuffer_free(input.pointer)
        evbuffer_free(output.pointer)
    }

    var isOpen: Bool { descriptor >= 0 }

    /// Frees the events and closes the socket. Idempotent.
    func close() {
        cancelScheduledWrite()
        unwatchDrain()
        if let readEvent { event_free(readEvent) }
        if let writeEvent { event_free(writeEvent) }
        readEvent = nil
        writeEvent = nil
        readArmed = false
        writeArmed = false
        wantsReading = false
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Frees the events and hands the socket to the caller, open; the buffers
    /// stay (for the caller to move what they hold). The stream is closed after.
    func detachDescriptor() -> Int32 {
        let socket = descriptor
        descriptor = -1
        close()
        return socket
    }

    // MARK: reading

    /// Reading is wanted, with `timeout` counted from the last byte read;
    /// armed now unless `armNow` is false (a stream still handshaking).
    func wantReading(timeout: EventTimeout?, armNow: Bool = true) {
        guard isOpen else { return }
        if readArmed && timeout == readTimeout { wantsReading = true; return }
        let hadTimeout = readTimeout != nil
        readTimeout = timeout
        wantsReading = true
        if readArmed && (timeout != nil || hadTimeout) { rescheduleReadTimeout() }
        if armNow { updateReadInterest() }
    }

    /// Counts the read timeout from now, when reading is armed with one;
    /// else nothing (a paused or stopped stream stays as it is).
    func restartReadTimeout() {
        guard readArmed, readTimeout != nil else { return }
        rescheduleReadTimeout()
    }

    /// Gives the armed read event `readTimeout` from now, or no timeout.
    ///
    /// On a read event still on the socket, adding it again only reschedules
    /// its timer, and removing the timer leaves the socket's registration
    /// alone: no epoll_ctl either way. But when its timeout has expired in
    /// this loop pass and its callback is still queued behind the one running
    /// now, libevent 2.1 has already taken it off the socket
    /// (`timeout_process` deletes, then activates), and `event_add` on an
    /// active event reschedules the timer and drops the queued callback
    /// without putting the event back on the socket: the stream would wait
    /// out its new timeout deaf to what arrives (a pooled upstream connection
    /// taken as its idle time ran out got its response and answered 504);
    /// `event_remove_timer` would leave the stale timeout queued. Deleting
    /// such an event first makes the add a whole one (the changelist turns
    /// the two into one epoll_ctl MOD, paid only by a re-arm in the pass its
    /// timeout expired), and records read ahead get their callback again, as
    /// `armRead` gives them.
    private func rescheduleReadTimeout() {
        let offSocket = isReadEventOffSocket
        if offSocket { event_del(readEvent) }
        if var value = readTimeout?.value {
            event_add(readEvent, &value)
        } else if offSocket {
            event_add(readEvent, nil)
        } else {
            event_remove_timer(readEvent)
        }
        if offSocket && owner?.holdsUnreadInput == true { activateRead() }
    }

    /// The armed read event's timeout expired in this pass and its callback
    /// is queued: libevent has taken it off the socket (`rescheduleReadTimeout`).
    /// `event_pending` reports a read for an event on its socket, or for one
    /// whose queued callback has a read in it: `activateRead` never adds one
    /// to an event off its socket, so this tells the two states apart.
    private var isReadEventOffSocket: Bool { event_pending(readEvent, EventFlags.read, nil) == 0 }

    func stopReading() {
        wantsReading = false
        updateReadInterest()
    }

    func setReadHighWatermark(_ high: Int) {
        readHighWatermark = high
        updateReadInterest()
    }

    /// The bytes the input may still take before the high watermark.
    var readRoom: Int { max(0, readHighWatermark - input.count) }

    /// Adds the read event when reading is wanted and there is room, removes
    /// it otherwise; watches the input drain when only the room is missing.
    func updateReadInterest() {
        let full = input.count >= readHighWatermark
        if wantsReading && isOpen && full { watchDrain() } else { unwatchDrain() }
        let wanted = wantsReading && isOpen && !full
        guard wanted != readArmed else { return }
        if wanted { armRead(timeout: readTimeout) } else { disarmRead() }
    }

    /// Adds the read event (for a handshake, or a write that needs a read).
    /// When the owner already holds input, the read callback runs later in
    /// this loop pass (`activateRead`): epoll reports only what is still in
    /// the socket.
    func armRead(timeout: EventTimeout?) {
        guard isOpen else { return }
        if var value = timeout?.value {
            event_add(readEvent, &value)
        } else {
            event_add(readEvent, nil)
        }
        readArmed = true
        if owner?.holdsUnreadInput == true { activateRead() }
    }

    /// Runs the read callback later in this loop pass (libevent appends it
    /// to the active queue it is running; never from inside the caller), when
    /// the read event is armed: for bytes the stream already holds above the
    /// socket (a TLS stream's records read ahead) that no readiness of the
    /// socket will announce. Not for an event whose expired timeout is queued
    /// (off its socket): that callback runs anyway, and a re-arm before it
    /// (`rescheduleReadTimeout`) puts the event back and activates it here.
    func activateRead() {
        guard let readEvent, isOpen, readArmed, !isReadEventOffSocket else { return }
        event_active(readEvent, EventFlags.activeRead, 0)
    }

    func disarmRead() {
        if let readEvent, readArmed { event_del(readEvent) }
        readArmed = false
    }

    /// Lends `body` up to `length` bytes of space reserved at the end of the
    /// input (one contiguous extent) and commits the count it returns (> 0).
    func withReservedInput(_ length: Int, _ body: (UnsafeMutableRawPointer, Int) -> Int32) -> Int32 {
        var extent = iovec()
        guard evbuffer_reserve_space(input.pointer, length, &extent, 1) == 1, let base = extent.iov_base else { return -1 }
        let count = body(base, min(extent.iov_len, length))
        extent.iov_len = count > 0 ? Int(count) : 0
        evbuffer_commit_space(input.pointer, &extent, count > 0 ? 1 : 0)
        return count
    }

    private func watchDrain() {
        guard drainWatch == nil else { return }
        // Context: unretained self; the entry is removed before self goes away (close, deinit).
        drainWatch = evbuffer_add_cb(input.pointer, StreamEvents.drainTrampoline, Unmanaged.passUnretained(self).toOpaque())
    }

    private func unwatchDrain() {
        guard let drainWatch else { return }
        evbuffer_remove_cb_entry(input.pointer, drainWatch)
        self.drainWatch = nil
    }

    /// The input changed while full: reading resumes once there is room. No
    /// owner call happens here (a consumer is draining right now).
    private func inputDidChange(deleted: Int) {
        if deleted > 0 && input.count < readHighWatermark { updateReadInterest() }
    }

    // MARK: writing

    func armWrite(timeout: EventTimeout?) {
        guard !writeArmed, isOpen else { return }
        if var value = timeout?.value {
            event_add(writeEvent, &value)
        } else {
            event_add(writeEvent, nil)
        }
        writeArmed = true
    }

    func disarmWrite() {
        if let writeEvent, writeArmed { event_del(writeEvent) }
        writeArmed = false
        hasPendingActivation = false
    }

    func disarmAll() {
        disarmRead()
        disarmWrite()
    }

    /// Runs the write callback later in this loop pass, as `activateRead`:
    /// how a stream reports what it found inside a method its delegate called.
    func activateWrite() {
        guard let writeEvent, isOpen else { return }
        if !writeArmed { armWrite(timeout: nil) }
        hasPendingActivation = true
        event_active(writeEvent, EventFlags.activeWrite, 0)
    }

    /// Runs the owner's write callback once this loop pass's other callbacks
    /// have run (from the loop's `PassEndWrites`), without adding the write
    /// event (so no epoll registration): the writes of one pass leave
    /// together, after every read of that pass. Nothing when the write event
    /// is armed (the socket is full: its drain writes) or a write is already
    /// scheduled.
    func scheduleWrite() {
        guard isOpen, !writeArmed, !writeScheduled else { return }
        writeScheduled = true
        loop.passEndWrites.enqueue(self)
    }

    /// Called by `PassEndWrites` for this object's entry: the owner's write
    /// callback, as the socket's readiness would run it.
    func runScheduledWrite() {
        guard writeScheduled else { return }
        writeScheduled = false
        let wroteAhead = wroteAheadOfSchedule
        wroteAheadOfSchedule = false
        // Armed since it was scheduled: the socket is full, or the owner wants
        // its write callback; that callback writes. Empty: something wrote it
        // (reported from here only when it was the owner's write ahead).
        guard isOpen, !writeArmed, wroteAhead || !output.isEmpty, let owner else { return }
        withExtendedLifetime(owner) { owner.eventsDidFireWrite(timedOut: false) }
    }

    /// The owner wrote from its output while a write was scheduled (a
    /// message's end, sent before the work that follows it).
    func noteWriteAheadOfSchedule() {
        if writeScheduled { wroteAheadOfSchedule = true }
    }

    private func cancelScheduledWrite() {
        wroteAheadOfSchedule = false
        guard writeScheduled else { return }
        writeScheduled = false
        loop.passEndWrites.remove(self)
    }

    /// Whether this write callback is the one `activateWrite` asked for (and forgets it).
    func consumeActivation() -> Bool {
        defer { hasPendingActivation = false }
        return hasPendingActivation
    }

    // MARK: trampolines

    private static let readTrampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        let events = Unmanaged<StreamEvents>.fromOpaque(context).takeUnretainedValue()
        // The owner's delegate may release the stream's last reference inside
        // the callback: both stay alive until it returns.
        guard let owner = events.owner else { return }
        withExtendedLifetime((events, owner)) { owner.eventsDidFireRead(timedOut: EventFlags.timedOut(what)) }
    }

    private static let writeTrampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        let events = Unmanaged<StreamEvents>.fromOpaque(context).takeUnretainedValue()
        guard let owner = events.owner else { return }
        withExtendedLifetime((events, owner)) { owner.eventsDidFireWrite(timedOut: EventFlags.timedOut(what)) }
    }

    private static let drainTrampoline: evbuffer_cb_func = { _, info, context in
        guard let context, let info else { return }
        Unmanaged<StreamEvents>.fromOpaque(context).takeUnretainedValue().inputDidChange(deleted: info.pointee.n_deleted)
    }
}

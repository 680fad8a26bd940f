internal import CLibevent
import Foundation

/// A plain TCP connection (a client of a forward or gateway listener), read
/// and written by pinproxy itself over two libevent events; owns its socket,
/// its events and its two buffers.
///
/// Why not a bufferevent: libevent's socket bufferevent asks FIONREAD before
/// every read (`evbuffer_read` sizes it so), runs its callbacks a second loop
/// pass later (`BEV_OPT_DEFER_CALLBACKS`) and re-adds its events on every
/// enable. Here one `readv` fills space reserved in the input buffer
/// (`evbuffer_reserve_space` / `commit_space`), one `writev` empties the
/// output (`evbuffer_write`), and the delegate is called from the event's own
/// callback. Events are added and removed only when interest changes.
///
/// Re-entrancy: the stream calls its delegate only from its event callbacks,
/// never from a method the delegate calls (`flush` that fails leaves the
/// error to the write event), so a delegate may do anything, close included,
/// inside a callback.
final class PlainStream: ByteStream {
    let input: EventBuffer
    let output: EventBuffer
    unowned var delegate: ByteStreamDelegate?
    /// Keeps the loop (its event_base) alive as long as this object's events.
    private let loop: EventLoop
    private(set) var descriptor: Int32
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    private var readTimeout: EventTimeout?
    private var writeTimeout: EventTimeout?
    private var readHighWatermark = Int.max
    private var writeLowWatermark = 0
    /// `startReading` was called and `stopReading` was not (nor did the peer end).
    private var wantsReading = false
    /// Whether each event is added now, so each change costs one `event_add`/`event_del`.
    private var readArmed = false
    private var writeArmed = false
    /// While reading is wanted but `input` is full, a callback on the input
    /// buffer waits for a consumer to drain it below the high watermark
    /// (consumers drain outside this stream's callbacks too: a relay moving
    /// buffered body bytes once its upstream is ready).
    private var drainWatch: OpaquePointer?

    /// The most one `readv` takes: a request head, or a slice of a body that
    /// the relay moves on before reading again.
    static let readSize = 16 * 1024

    /// Takes ownership of the connected `descriptor` (closed by `close`, also
    /// when init fails); nil when libevent cannot allocate.
    init?(loop: EventLoop, descriptor: Int32) {
        self.loop = loop
        self.descriptor = descriptor
        guard let inputBuffer = evbuffer_new(), let outputBuffer = evbuffer_new() else {
            Glibc.close(descriptor)
            return nil
        }
        input = EventBuffer(pointer: inputBuffer)
        output = EventBuffer(pointer: outputBuffer)
        // Context: unretained self; both events are freed in close(), which
        // deinit calls, so a callback never finds self gone.
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(loop.base, descriptor, EventFlags.persistentRead, PlainStream.readTrampoline, context)
        writeEvent = event_new(loop.base, descriptor, EventFlags.persistentWrite, PlainStream.writeTrampoline, context)
        guard readEvent != nil, writeEvent != nil else {
            close()
            evbuffer_free(inputBuffer)
            evbuffer_free(outputBuffer)
            return nil
        }
    }

    deinit {
        close()
        evbuffer_free(input.pointer)
        evbuffer_free(output.pointer)
    }

    var isOpen: Bool { descriptor >= 0 }

    func close() {
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

    // MARK: reading

    func startReading(timeout: EventTimeout?) {
        guard isOpen else { return }
        if readArmed && timeout == readTimeout { return }
        let hadTimeout = readTimeout != nil
        readTimeout = timeout
        wantsReading = true
        if readArmed, var value = timeout?.value {
            // Adding a pending event again only reschedules its timeout (no epoll_ctl).
            event_add(readEvent, &value)
        } else if readArmed && hadTimeout {
            // libevent keeps a pending timeout when re-added without one; removing
            // only the timer leaves the socket's epoll registration alone.
            event_remove_timer(readEvent)
        }
        updateReadInterest()
    }

    func stopReading() {
        wantsReading = false
        updateReadInterest()
    }

    func setReadHighWatermark(_ high: Int) {
        readHighWatermark = high
        updateReadInterest()
    }

    /// Adds the read event when reading is wanted and there is room, removes
    /// it otherwise; watches the input drain when only the room is missing.
    private func updateReadInterest() {
        let full = input.count >= readHighWatermark
        let wanted = wantsReading && isOpen && !full
        if wantsReading && isOpen && full { watchDrain() } else { unwatchDrain() }
        guard wanted != readArmed else { return }
        if wanted {
            if var timeout = readTimeout?.value {
                event_add(readEvent, &timeout)
            } else {
                event_add(readEvent, nil)
            }
            readArmed = true
        } else {
            disarmRead()
        }
    }

    private func disarmRead() {
        if let readEvent { event_del(readEvent) }
        readArmed = false
    }

    private func watchDrain() {
        guard drainWatch == nil else { return }
        // Context: unretained self; the entry is removed before self goes away (close, deinit).
        drainWatch = evbuffer_add_cb(input.pointer, PlainStream.drainTrampoline, Unmanaged.passUnretained(self).toOpaque())
    }

    private func unwatchDrain() {
        guard let drainWatch else { return }
        evbuffer_remove_cb_entry(input.pointer, drainWatch)
        self.drainWatch = nil
    }

    /// The input changed while full: reading resumes once there is room. No
    /// delegate call happens here (a consumer is draining right now).
    private func inputDidChange(deleted: Int) {
        if deleted > 0 && input.count < readHighWatermark { updateReadInterest() }
    }

    /// Reads what the socket holds now, as the read event would (for a
    /// socket known to be readable: the first bytes that woke a waiting client).
    /// Call it from outside the delegate's callbacks.
    func readNow() {
        withExtendedLifetime(self) { didFireRead(timedOut: false) }
    }

    private func didFireRead(timedOut: Bool) {
        if timedOut {
            delegate?.stream(self, didEnd: .timedOut(reading: true))
            return
        }
        let room = min(Self.readSize, readHighWatermark - input.count)
        guard room > 0 else { updateReadInterest(); return }
        var reserved = (iovec(), iovec())
        let count = withUnsafeMutablePointer(to: &reserved) {
            // evbuffer_iovec is struct iovec here (<event2/buffer.h>), so the reserved extents go straight to readv.
            $0.withMemoryRebound(to: iovec.self, capacity: 2) { vectors -> Int in
                let reservedCount = Int(evbuffer_reserve_space(input.pointer, room, vectors, 2))
                guard reservedCount > 0 else { return -1 }
                let read = readv(descriptor, vectors, Int32(reservedCount))
                let saved = errno
                var left = max(read, 0)
                for index in 0..<reservedCount {
                    vectors[index].iov_len = min(vectors[index].iov_len, left)
                    left -= vectors[index].iov_len
                }
                evbuffer_commit_space(input.pointer, vectors, read > 0 ? Int32(reservedCount) : 0)
                errno = saved
                return read
            }
        }
        if count > 0 {
            delegate?.streamDidRead(self)
            updateReadInterest()
        } else if count == 0 {
            wantsReading = false
            updateReadInterest()
            delegate?.stream(self, didEnd: .endOfStream)
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            wantsReading = false
            updateReadInterest()
            delegate?.stream(self, didEnd: .failed("read: \(String(cString: strerror(errno)))"))
        }
    }

    // MARK: writing

    /// Queues `bytes`; `flush` sends them (so a head and the body bytes behind
    /// it leave in one `writev`).
    func write(_ bytes: [UInt8]) {
        guard isOpen else { return }
        output.append(bytes)
    }

    func flush() {
        guard isOpen, !output.isEmpty else { return }
        // Behind an armed write event the socket is full: it will write when it drains.
        if !writeArmed {
            let written = evbuffer_write(output.pointer, descriptor)
            if written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                // Reported by the write event, which finds the same error (never from inside flush).
                armWrite()
                event_active(writeEvent, EventFlags.activeWrite, 0)
                return
            }
        }
        if !output.isEmpty { armWrite() }
    }

    func setWriteLowWatermark(_ low: Int) { writeLowWatermark = low }

    func setWriteTimeout(_ timeout: EventTimeout?) { writeTimeout = timeout }

    private func armWrite() {
        guard !writeArmed, isOpen else { return }
        if var timeout = writeTimeout?.value {
            event_add(writeEvent, &timeout)
        } else {
            event_add(writeEvent, nil)
        }
        writeArmed = true
    }

    private func didFireWrite(timedOut: Bool) {
        if timedOut {
            delegate?.stream(self, didEnd: .timedOut(reading: false))
            return
        }
        if !output.isEmpty {
            let written = evbuffer_write(output.pointer, descriptor)
            if written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                let detail = "write: \(String(cString: strerror(errno)))"
                if let writeEvent { event_del(writeEvent) }
                writeArmed = false
                delegate?.stream(self, didEnd: .failed(detail))
                return
            }
        }
        if output.isEmpty {
            if let writeEvent { event_del(writeEvent) }
            writeArmed = false
        }
        if output.count <= writeLowWatermark { delegate?.streamDidDrain(self) }
    }

    // MARK: trampolines

    private static let readTrampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        let stream = Unmanaged<PlainStream>.fromOpaque(context).takeUnretainedValue()
        // The delegate may release the stream's last reference inside the callback.
        withExtendedLifetime(stream) { stream.didFireRead(timedOut: EventFlags.timedOut(what)) }
    }

    private static let drainTrampoline: evbuffer_cb_func = { _, info, context in
        guard let context, let info else { return }
        Unmanaged<PlainStream>.fromOpaque(context).takeUnretainedValue().inputDidChange(deleted: info.pointee.n_deleted)
    }

    private static let writeTrampoline: event_callback_fn = { _, what, context in
        guard let context else { return }
        let stream = Unmanaged<PlainStream>.fromOpaque(context).takeUnretainedValue()
        withExtendedLifetime(stream) { stream.didFireWrite(timedOut: EventFlags.timedOut(what)) }
    }
}

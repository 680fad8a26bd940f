internal import CLibevent
internal import CEventInternals
internal import COpenSSL
import Foundation

/// Receives a bufferevent's callbacks. One method per callback; the
/// trampolines in `BufferEvent` carry no logic.
protocol BufferEventDelegate: AnyObject {
    func bufferEventDidRead(_ event: BufferEvent)
    func bufferEventDidWrite(_ event: BufferEvent)
    func bufferEvent(_ event: BufferEvent, didReport events: BufferEventEvents)
}

/// A libevent bufferevent (plain socket or OpenSSL), owned: `free()` (or
/// deinit) releases it, closing the socket and freeing the SSL with it.
///
/// Callbacks reach this object through an unretained context pointer. That is
/// safe because `bufferevent_free` clears the callbacks before anything else,
/// and this object frees the bufferevent before it goes away.
final class BufferEvent {
    private(set) var raw: OpaquePointer?
    /// Unowned, not weak: every delegate owns this object (directly or through
    /// what it owns) and frees it before going away, so a callback never finds
    /// the delegate gone. A weak reference would give each session a side
    /// table and put every retain and release of it on the slow path.
    unowned var delegate: BufferEventDelegate?
    /// Keeps the loop (its event_base) alive as long as this object's event.
    private let loop: EventLoop

    private init(takingOwnership raw: OpaquePointer, loop: EventLoop) {
        self.raw = raw
        self.loop = loop
        bufferevent_setcb(raw, BufferEvent.readTrampoline, BufferEvent.writeTrampoline, BufferEvent.eventTrampoline,
                          Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { free() }

    /// A bufferevent over an accepted or connected plain socket.
    static func socket(loop: EventLoop, descriptor: Int32) -> BufferEvent? {
        guard let raw = bufferevent_socket_new(loop.base, descriptor, EventFlags.bufferEventOptions) else { return nil }
        return BufferEvent(takingOwnership: raw, loop: loop)
    }

    /// A TLS client bufferevent over a connected socket; takes ownership of `ssl`
    /// (freed with the bufferevent) and starts the handshake.
    static func tlsClient(loop: EventLoop, descriptor: Int32, ssl: OpaquePointer) -> BufferEvent? {
        guard let raw = bufferevent_openssl_socket_new(loop.base, descriptor, ssl, EventFlags.sslConnecting,
                                                       EventFlags.bufferEventOptions) else { return nil }
        // An upstream that closes without close_notify after a complete
        // response is common; framing tells us whether the body was whole.
        bufferevent_openssl_set_allow_dirty_shutdown(raw, 1)
        return BufferEvent(takingOwnership: raw, loop: loop)
    }

    /// Frees the bufferevent (and its socket, and its SSL). Idempotent.
    func free() {
        if let raw { bufferevent_free(raw) }
        raw = nil
    }

    var isOpen: Bool { raw != nil }
    var input: OpaquePointer { bufferevent_get_input(raw) }
    var output: OpaquePointer { bufferevent_get_output(raw) }
    var inputLength: Int { raw == nil ? 0 : evbuffer_get_length(input) }
    var outputLength: Int { raw == nil ? 0 : evbuffer_get_length(output) }

    func enableRead() {
        guard let raw else { return }
        bufferevent_enable(raw, EventFlags.read)
        readAgainIfTLSBuffered()
    }
    /// `enableRead` without its side effect on an enabled event: libevent
    /// re-adds the event (an event_add, restarting the read timeout) on every
    /// enable. For callers that must not restart the timeout, or have none.
    func enableReadIfDisabled() {
        if let raw, bufferevent_get_enabled(raw) & EventFlags.read == 0 { enableRead() }
    }
    func disableRead() { if let raw { bufferevent_disable(raw, EventFlags.read) } }
    func enableReadWrite() { if let raw { bufferevent_enable(raw, EventFlags.readWrite) } }
    func enableWrite() { if let raw { bufferevent_enable(raw, EventFlags.write) } }
    func disableWrite() { if let raw { bufferevent_disable(raw, EventFlags.write) } }

    // MARK: writing without waiting for the loop
    //
    // A bufferevent only writes when the loop reports the socket writable:
    // every response costs an epoll_ctl to watch EPOLLOUT, a loop turn, and an
    // epoll_ctl to stop watching. A connected socket almost always has room
    // for a small response, so, like HAProxy, pinproxy writes first and only
    // watches for writability when the socket did not take everything.

    /// Plain sockets: writes the pending output now (one `writev`). Whatever
    /// the socket does not take stays queued and EV_WRITE is enabled, with its
    /// write timeout, until libevent has written it; a write error is left for
    /// libevent's own write to report through the event callback.
    ///
    /// Callers keep EV_WRITE disabled while the output is empty (otherwise each
    /// append would still arm EPOLLOUT) and call this after every append.
    func flushOutput() {
        guard let raw else { return }
        let output = bufferevent_get_output(raw)
        guard evbuffer_get_length(output) > 0 else { return }
        let descriptor = bufferevent_getfd(raw)
        if descriptor >= 0 {
            // libevent freezes the front of a socket bufferevent's output so that
            // only its own write drains it; it thaws it the same way around its write.
            evbuffer_unfreeze(output, 1)
            _ = evbuffer_write(output, descriptor)
            evbuffer_freeze(output, 1)
        }
        if evbuffer_get_length(output) > 0 { bufferevent_enable(raw, EventFlags.write) }
    }

    /// Plain sockets: reads what the socket holds into the input now. Returns
    /// the byte count, 0 at end of stream, -1 when there is nothing or on an
    /// error (left for libevent's own read to report).
    func readNow() -> Int {
        guard let raw else { return -1 }
        let descriptor = bufferevent_getfd(raw)
        guard descriptor >= 0 else { return -1 }
        let input = bufferevent_get_input(raw)
        // libevent freezes the end of a socket bufferevent's input so that only
        // its own read appends; it thaws it the same way around that read.
        evbuffer_unfreeze(input, 0)
        let count = evbuffer_read(input, descriptor, -1)
        evbuffer_freeze(input, 0)
        return Int(count)
    }

    // MARK: TLS read-ahead
    //
    // Without read-ahead OpenSSL reads a record in two calls, its 5-byte header
    // and then its body: two read(2) per record. With it, one read takes what
    // the socket holds. But libevent 2.1 reads again only when the socket is
    // readable, so records that arrived with the last read and sit unprocessed
    // in OpenSSL would wait for the next packet. So once read-ahead is on,
    // this object looks at OpenSSL's buffer each time it may hold such records
    // and reading is on: after every read callback and whenever reading is
    // enabled again (after a pause, when a pooled connection is taken).

    /// Whether OpenSSL reads ahead on this connection.
    private var readsAhead = false

    /// Lets OpenSSL read ahead (see above).
    func enableTLSReadAhead() {
        guard let raw, let ssl = bufferevent_openssl_get_ssl(raw) else { return }
        SSL_set_read_ahead(ssl, 1)
        readsAhead = true
    }

    /// When reading is on and OpenSSL holds bytes it has not processed, runs
    /// libevent's TLS read again this loop turn. It adds input (and calls the
    /// read callback) only for complete records, so a partial record waits
    /// for the socket without a busy loop.
    private func readAgainIfTLSBuffered() {
        guard readsAhead, let raw, bufferevent_get_enabled(raw) & EventFlags.read != 0,
              let ssl = bufferevent_openssl_get_ssl(raw), SSL_has_pending(ssl) == 1 else { return }
        pinproxy_bufferevent_activate_read(UnsafeMutableRawPointer(raw))
    }

    /// The read callback: the delegate consumes input, then records read
    /// ahead with it get their turn. The delegate may free the bufferevent.
    private func didRead() {
        delegate?.bufferEventDidRead(self)
        readAgainIfTLSBuffered()
    }

    /// The largest write sent with `SSL_write` directly: one TLS record. A
    /// write OpenSSL could not finish is retried by libevent from the output
    /// buffer, at most 16 KiB at a time, and OpenSSL requires the retry to
    /// repeat the same bytes, so a direct write must never be longer.
    static let maximumDirectTLSWrite = 16 * 1024

    /// TLS: sends `bytes` with `SSL_write` now when nothing is queued ahead of
    /// them; otherwise, or when OpenSSL cannot send them whole right away
    /// (socket full, connection failed), they are queued for libevent, which
    /// writes them on the next writable event and reports any error.
    func writeTLSNow(_ bytes: [UInt8]) {
        guard let raw else { return }
        if bytes.count <= Self.maximumDirectTLSWrite, evbuffer_get_length(bufferevent_get_output(raw)) == 0,
           let ssl = bufferevent_openssl_get_ssl(raw) {
            ERR_clear_error()
            let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            if written == Int32(bytes.count) { return }
            ERR_clear_error()
        }
        write(bytes)
        bufferevent_enable(raw, EventFlags.write)
    }

    /// The write callback fires when output drains to `low` bytes or fewer.
    func setWriteLowWatermark(_ low: Int) { if let raw { bufferevent_setwatermark(raw, EventFlags.write, low, 0) } }
    /// libevent stops reading from the socket while input holds `high` bytes.
    func setReadHighWatermark(_ high: Int) { if let raw { bufferevent_setwatermark(raw, EventFlags.read, 0, high) } }

    /// Read and write inactivity timeouts; nil clears.
    func setTimeouts(read: Duration?, write: Duration?) {
        setTimeouts(read: read.map(timeval.init(duration:)), write: write.map(timeval.init(duration:)))
    }

    /// As above, with the timeouts already converted (the per-request path).
    func setTimeouts(read: timeval?, write: timeval?) {
        guard let raw else { return }
        var readValue = read ?? timeval()
        var writeValue = write ?? timeval()
        withUnsafePointer(to: &readValue) { readPointer in
            withUnsafePointer(to: &writeValue) { writePointer in
                _ = bufferevent_set_timeouts(raw, read == nil ? nil : readPointer, write == nil ? nil : writePointer)
            }
        }
    }

    /// Appends bytes to the output (copied once into the evbuffer).
    func write(_ bytes: [UInt8]) {
        guard let raw else { return }
        bytes.withUnsafeBytes { _ = bufferevent_write(raw, $0.baseAddress, $0.count) }
    }

    /// The last OpenSSL error of a TLS bufferevent (0 when none).
    var openSSLError: UInt { raw == nil ? 0 : bufferevent_get_openssl_error(raw) }

    private static let readTrampoline: bufferevent_data_cb = { _, context in
        guard let context else { return }
        Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue().didRead()
    }

    private static let writeTrampoline: bufferevent_data_cb = { _, context in
        guard let context else { return }
        let event = Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue()
        event.delegate?.bufferEventDidWrite(event)
    }

    private static let eventTrampoline: bufferevent_event_cb = { _, what, context in
        guard let context else { return }
        let event = Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue()
        event.delegate?.bufferEvent(event, didReport: BufferEventEvents(rawValue: what))
    }
}

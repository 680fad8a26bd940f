internal import CLibevent
internal import CEventInternals
internal import COpenSSL
import Foundation

/// A TLS connection over a socket, run by a libevent OpenSSL bufferevent;
/// owns the bufferevent, the `SSL` (through its `TLSConnection`) and the
/// socket, and frees them in that order (`close`, deinit).
///
/// The bufferevent is made without `BEV_OPT_CLOSE_ON_FREE`, so libevent
/// frees neither the `SSL` nor the socket: each has one owner here, on every
/// path. Callbacks reach this object through an unretained context pointer:
/// `bufferevent_free` clears them first, and this object frees the
/// bufferevent before it goes away. Callbacks are deferred to the loop
/// (`BEV_OPT_DEFER_CALLBACKS`), so a write or close inside one never
/// re-enters another.
final class TLSStream: ByteStream {
    private var raw: OpaquePointer?
    private var connection: TLSConnection?
    private var descriptor: Int32
    unowned var delegate: ByteStreamDelegate?
    /// Keeps the loop (its event_base) alive as long as this object's events.
    private let loop: EventLoop
    private var writeTimeout: EventTimeout?
    private var readTimeout: EventTimeout?
    let input: EventBuffer
    let output: EventBuffer

    /// A TLS client over the connected `descriptor`, which it starts the
    /// handshake on; takes ownership of both (freed here also when init fails).
    init?(loop: EventLoop, descriptor: Int32, connectingWith connection: TLSConnection) {
        self.loop = loop
        self.descriptor = descriptor
        self.connection = connection
        guard let raw = bufferevent_openssl_socket_new(loop.base, descriptor, connection.pointer, EventFlags.sslConnecting,
                                                       EventFlags.tlsStreamOptions) else {
            Glibc.close(descriptor)
            return nil
        }
        self.raw = raw
        input = EventBuffer(pointer: bufferevent_get_input(raw))
        output = EventBuffer(pointer: bufferevent_get_output(raw))
        // An upstream that closes without close_notify after a complete
        // response is common; framing tells whether the body was whole.
        bufferevent_openssl_set_allow_dirty_shutdown(raw, 1)
        bufferevent_setcb(raw, TLSStream.readTrampoline, TLSStream.writeTrampoline, TLSStream.eventTrampoline,
                          Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { close() }

    var isOpen: Bool { raw != nil }

    /// Frees the bufferevent, then the `SSL`, then closes the socket. Idempotent.
    func close() {
        if let raw { bufferevent_free(raw) }
        raw = nil
        connection = nil
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Starts the handshake's I/O (both directions, as libevent needs for it).
    func startHandshake() {
        if let raw { bufferevent_enable(raw, EventFlags.readWrite) }
    }

    /// Whether the handshake resumed a session.
    var resumedSession: Bool { connection?.resumedSession ?? false }

    // MARK: reading

    func startReading(timeout: EventTimeout?) {
        guard let raw else { return }
        // bufferevent_set_timeouts re-adds both events: only when the timeout changes.
        if timeout != readTimeout {
            readTimeout = timeout
            applyTimeouts()
        }
        if bufferevent_get_enabled(raw) & EventFlags.read == 0 { bufferevent_enable(raw, EventFlags.read) }
        readAgainIfRecordsBuffered()
    }

    func stopReading() { if let raw { bufferevent_disable(raw, EventFlags.read) } }

    func setReadHighWatermark(_ high: Int) { if let raw { bufferevent_setwatermark(raw, EventFlags.read, 0, high) } }

    // MARK: read-ahead
    //
    // Without read-ahead OpenSSL reads a record in two calls, its 5-byte header
    // and then its body: two read(2) per record. With it, one read takes what
    // the socket holds. But libevent 2.1 reads again only when the socket is
    // readable, so records that arrived with the last read and sit unprocessed
    // in OpenSSL would wait for the next packet. So once read-ahead is on,
    // this object looks at OpenSSL's buffer each time it may hold such records
    // and reading is on: after every read callback and whenever reading starts.

    private var readsAhead = false

    /// Lets OpenSSL read ahead (see above); for a verified connection.
    func enableReadAhead() {
        connection?.enableReadAhead()
        readsAhead = true
    }

    /// When reading is on and OpenSSL holds bytes it has not processed, runs
    /// libevent's TLS read again this loop turn. It adds input (and calls the
    /// read callback) only for complete records, so a partial record waits
    /// for the socket without a busy loop.
    private func readAgainIfRecordsBuffered() {
        guard readsAhead, let raw, bufferevent_get_enabled(raw) & EventFlags.read != 0,
              connection?.hasBufferedRecords == true else { return }
        pinproxy_bufferevent_activate_read(UnsafeMutableRawPointer(raw))
    }

    // MARK: writing

    /// The largest write sent with `SSL_write` directly: one TLS record. A
    /// write OpenSSL could not finish is retried by libevent from the output
    /// buffer, at most 16 KiB at a time, and OpenSSL requires the retry to
    /// repeat the same bytes, so a direct write must never be longer.
    static let maximumDirectWrite = 16 * 1024

    /// Sends `bytes` with `SSL_write` now when nothing is queued ahead of
    /// them and they fit one record: a request head leaves without waiting
    /// for the loop to report the socket writable. Otherwise, or when OpenSSL
    /// cannot send them whole (socket full, connection failed), they are
    /// queued for libevent, which writes them and reports any error.
    func write(_ bytes: [UInt8]) {
        guard let raw, let connection else { return }
        if bytes.count <= Self.maximumDirectWrite, output.isEmpty {
            ERR_clear_error()
            let written = bytes.withUnsafeBytes { SSL_write(connection.pointer, $0.baseAddress, Int32($0.count)) }
            if written == Int32(bytes.count) { return }
            ERR_clear_error()
        }
        output.append(bytes)
        bufferevent_enable(raw, EventFlags.write)
    }

    /// libevent writes what is queued as the socket takes it (EV_WRITE is on
    /// only while something is queued: armed for nothing it costs an epoll_ctl).
    func flush() {
        if let raw, !output.isEmpty { bufferevent_enable(raw, EventFlags.write) }
    }

    func setWriteLowWatermark(_ low: Int) { if let raw { bufferevent_setwatermark(raw, EventFlags.write, low, 0) } }

    func setWriteTimeout(_ timeout: EventTimeout?) {
        guard timeout != writeTimeout else { return }
        writeTimeout = timeout
        applyTimeouts()
    }

    private func applyTimeouts() {
        guard let raw else { return }
        var readValue = readTimeout?.value ?? timeval()
        var writeValue = writeTimeout?.value ?? timeval()
        withUnsafePointer(to: &readValue) { readPointer in
            withUnsafePointer(to: &writeValue) { writePointer in
                _ = bufferevent_set_timeouts(raw, readTimeout == nil ? nil : readPointer, writeTimeout == nil ? nil : writePointer)
            }
        }
    }

    // MARK: callbacks

    private func didRead() {
        delegate?.streamDidRead(self)
        readAgainIfRecordsBuffered()
    }

    private func didWrite() {
        if let raw, output.isEmpty { bufferevent_disable(raw, EventFlags.write) }
        delegate?.streamDidDrain(self)
    }

    private func didReport(_ events: EventFlags.BufferEventReport) {
        if events.connected {
            delegate?.streamDidConnect(self)
            return
        }
        let ending: StreamEnd
        if events.timedOut {
            ending = .timedOut(reading: events.whileReading)
        } else if events.failed {
            let tlsError = raw.map { OpenSSLErrorText.describe(bufferevent_get_openssl_error($0)) } ?? ""
            let socketError = String(cString: strerror(shim_EVUTIL_SOCKET_ERROR()))
            ending = tlsError.isEmpty ? .failed(socketError) : .tlsFailed(tlsError)
        } else {
            ending = .endOfStream
        }
        delegate?.stream(self, didEnd: ending)
    }

    private static let readTrampoline: bufferevent_data_cb = { _, context in
        guard let context else { return }
        let stream = Unmanaged<TLSStream>.fromOpaque(context).takeUnretainedValue()
        // The delegate may release the stream's last reference inside the callback.
        withExtendedLifetime(stream) { stream.didRead() }
    }

    private static let writeTrampoline: bufferevent_data_cb = { _, context in
        guard let context else { return }
        let stream = Unmanaged<TLSStream>.fromOpaque(context).takeUnretainedValue()
        withExtendedLifetime(stream) { stream.didWrite() }
    }

    private static let eventTrampoline: bufferevent_event_cb = { _, what, context in
        guard let context else { return }
        let stream = Unmanaged<TLSStream>.fromOpaque(context).takeUnretainedValue()
        withExtendedLifetime(stream) { stream.didReport(EventFlags.BufferEventReport(what: what)) }
    }
}

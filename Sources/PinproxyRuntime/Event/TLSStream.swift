internal import CLibevent
internal import COpenSSL
import Foundation

/// A TLS connection over a socket, run by pinproxy itself: the `SSL` (owned
/// by its `TLSConnection`) over the socket's BIO, driven by two libevent
/// events, with the same buffers and watermarks as `PlainStream` (shared in
/// `StreamEvents`). Owns the socket and frees the `SSL` before closing it.
///
/// Why not libevent's OpenSSL bufferevent: it cannot start from bytes already
/// read (a ClientHello that arrived with a CONNECT), knows nothing of OpenSSL
/// 3's paused verification, runs its callbacks a loop pass late, and reads a
/// record in two calls unless re-activated by hand. Here one `read(2)` takes
/// what the socket holds (read-ahead), `SSL_read` decrypts straight into
/// space reserved in the input buffer, and the output goes out at the end
/// of the loop pass (`PassEndWrites`), up to one record per `SSL_write`.
///
/// Re-entrancy: the delegate is called only from the events' callbacks,
/// never from a method the delegate calls.
final class TLSStream: ByteStream, StreamEventsOwner {
    enum Role {
        /// Pinproxy connects (an upstream).
        case client
        /// Pinproxy accepts (an intercepted CONNECT); `prefix` holds bytes of
        /// the ClientHello already read from the socket, fed to OpenSSL first.
        case server(prefix: [UInt8])
    }

    private let events: StreamEvents
    unowned var delegate: ByteStreamDelegate?
    var input: EventBuffer { events.input }
    var output: EventBuffer { events.output }
    private var connection: TLSConnection?
    private var isOpenForData = false
    /// OpenSSL reads from the prefix first; set when it must move to the socket.
    private var readsPrefix = false
    /// SSL_read needs the socket writable (a key update to send), or SSL_write readable.
    private var readWaitsForWritable = false
    private var writeWaitsForReadable = false
    /// The length of an SSL_write OpenSSL asked to repeat (RFC: same bytes, at least as many).
    private var pendingWrite = 0
    /// An end found inside a method the delegate called (reported from the write event).
    private var deferredEnding: StreamEnd?
    /// The handshake completed inside `startHandshake`: reported from the write event.
    private var connectPending = false

    /// Takes ownership of the connected `descriptor` and of `connection`; nil
    /// when libevent cannot allocate (both are released then).
    init?(loop: EventLoop, descriptor: Int32, connection: TLSConnection, role: Role) {
        guard let events = StreamEvents(loop: loop, descriptor: descriptor) else { return nil }
        self.events = events
        self.connection = connection
        // The stream writes a record at a time from a buffer that may move
        // between a refused write and its retry, and may take a partial write.
        _ = shim_SSL_set_mode(connection.pointer, shim_SSL_MODE_ENABLE_PARTIAL_WRITE | shim_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        // No SSL_OP_IGNORE_UNEXPECTED_EOF: it makes an EOF without
        // close_notify read as one with it, and a truncated body delimited by
        // the close as whole. A peer that closes without close_notify after a
        // complete message is common: it ends as `.incompleteClose`, and the
        // message's framing judges it.
        switch role {
        case .client:
            guard SSL_set_fd(connection.pointer, descriptor) == 1 else { events.close(); return nil }
            SSL_set_connect_state(connection.pointer)
        case let .server(prefix):
            guard let socketBIO = BIO_new_socket(descriptor, BIO_NOCLOSE) else { events.close(); return nil }
            if prefix.isEmpty {
                SSL_set_bio(connection.pointer, socketBIO, socketBIO)
            } else {
                // The bytes read with the CONNECT come first; an empty memory BIO then
                // asks for more (eof_return -1), and OpenSSL moves to the socket.
                guard let prefixBIO = BIO_new(BIO_s_mem()) else { BIO_free(socketBIO); events.close(); return nil }
                _ = prefix.withUnsafeBytes { BIO_write(prefixBIO, $0.baseAddress, Int32($0.count)) }
                _ = shim_BIO_set_mem_eof_return(prefixBIO, -1)
                SSL_set_bio(connection.pointer, prefixBIO, socketBIO)
                readsPrefix = true
            }
            SSL_set_accept_state(connection.pointer)
        }
        guard events.attach(to: self) else { return nil }
    }

    deinit { close() }

    var isOpen: Bool { events.isOpen }

    /// Sends close_notify (when the connection is up, has not failed and is
    /// not to be reset: a peer reading a body delimited by the close must see
    /// whether it was cut, RFC 8446 §6.1), frees the `SSL`, then closes the
    /// socket. Idempotent.
    func close() {
        events.disarmAll()
        sendCloseNotify()
        connection = nil
        events.close()
    }

    /// A fatal TLS or socket error happened (OpenSSL forbids SSL_shutdown after one).
    private var hasFailed = false

    /// `resetOnClose` was asked for: `close` sends no close_notify.
    private var resets = false

    func resetOnClose() {
        guard events.isOpen else { return }
        resets = true
        SocketOptions.resetOnClose(events.descriptor)
    }

    /// Whether the handshake resumed a session.
    var resumedSession: Bool { connection?.resumedSession ?? false }

    /// The TLS connection (for its SNI and ALPN once connected).
    var tls: TLSConnection? { connection }

    // MARK: the handshake

    /// Starts (or continues) the handshake; `streamDidConnect` reports its end.
    func startHandshake() { advanceHandshake(fromCallback: false) }

    /// The handshake stopped for verification (OpenSSL's retry-verify).
    private(set) var awaitsVerification = false

    /// Continues a handshake stopped for verification: the verify callback
    /// runs again. Its outcome is reported from a callback later in this
    /// loop pass, as for `startHandshake`.
    func resumeHandshake() {
        guard awaitsVerification else { return }
        awaitsVerification = false
        advanceHandshake(fromCallback: false)
    }

    private func advanceHandshake(fromCallback: Bool) {
        guard let connection, !isOpenForData else { return }
        ERR_clear_error()
        let result = SSL_do_handshake(connection.pointer)
        if result == 1 {
            isOpenForData = true
            events.disarmAll()
            if fromCallback {
                delegate?.streamDidConnect(self)
            } else {
                // Never from inside the caller: a callback later in this pass reports it.
                connectPending = true
                events.activateWrite()
            }
            return
        }
        switch SSL_get_error(connection.pointer, result) {
        case SSL_ERROR_WANT_READ:
            if switchToSocketIfPrefixRead() { return advanceHandshake(fromCallback: fromCallback) }
            events.disarmWrite()
            events.armRead(timeout: nil)
        case SSL_ERROR_WANT_WRITE:
            events.armWrite(timeout: nil)
        case SSL_ERROR_WANT_RETRY_VERIFY:
            // The verify callback waits for a custom command's verdict
            // (`UpstreamHandshake`): nothing to read or write until
            // `resumeHandshake`; the connector's handshake timer still runs.
            events.disarmAll()
            awaitsVerification = true
        case let code:
            let ending = handshakeEnding(code, refusal: connection.refusal)
            hasFailed = true
            if fromCallback {
                delegate?.stream(self, didEnd: ending)
            } else {
                deferredEnding = ending
                events.activateWrite()
            }
        }
    }

    /// Why a handshake stopped: a refusal of pinproxy's own (the client's
    /// SNI) says more than OpenSSL's queue; a peer that closed or reset
    /// (nothing on the queue, or OpenSSL's unexpected EOF) simply went away
    /// (a client giving up, an upstream dropping the connection), which is an
    /// end of stream, not a TLS error.
    private func handshakeEnding(_ code: Int32, refusal: TLSRefusal?) -> StreamEnd {
        if let refusal { return .tlsFailed("\(refusal)") }
        if code == SSL_ERROR_ZERO_RETURN || (code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
            if code == SSL_ERROR_ZERO_RETURN || errno == 0 || errno == ECONNRESET { return .endOfStream }
            return .failed(String(cString: strerror(errno)))
        }
        if code == SSL_ERROR_SSL && Self.isUnexpectedEOF(ERR_peek_error()) { return .endOfStream }
        return .tlsFailed(OpenSSLError.describeQueue(fallback: "TLS handshake failed"))
    }

    /// OpenSSL's error for a connection that ended without close_notify.
    private static func isUnexpectedEOF(_ code: UInt) -> Bool {
        ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING
    }

    /// After the prefix is read, OpenSSL reads the socket.
    private func switchToSocketIfPrefixRead() -> Bool {
        guard readsPrefix, let connection, let rbio = SSL_get_rbio(connection.pointer), shim_BIO_pending(rbio) == 0,
              let socketBIO = BIO_new_socket(events.descriptor, BIO_NOCLOSE) else { return false }
        readsPrefix = false
        // set0: the SSL takes the socket BIO and frees the spent memory BIO.
        SSL_set0_rbio(connection.pointer, socketBIO)
        return true
    }

    // MARK: reading

    func startReading(timeout: EventTimeout?) {
        events.wantReading(timeout: timeout, armNow: isOpenForData)
        // Arming the read event runs it at once for records OpenSSL holds
        // (`holdsUnreadInput`); a read event that was armed already is not
        // armed again, so the same check is made here.
        if holdsUnreadInput { events.activateRead() }
    }

    /// The read timeout counts from now (see `StreamEvents.restartReadTimeout`).
    func restartReadTimeout() { events.restartReadTimeout() }

    func stopReading() { events.stopReading() }

    func setReadHighWatermark(_ high: Int) { events.setReadHighWatermark(high) }

    /// OpenSSL reads ahead: one `read(2)` takes every record the socket holds.
    func enableReadAhead() { connection?.enableReadAhead() }

    /// Decrypts what OpenSSL can into the input, record by record, while
    /// there is room; stops when OpenSSL holds no more decrypted or buffered
    /// bytes, so that a readiness costs one `read(2)` (epoll reports the rest).
    private func readRecords() {
        guard let connection else { return }
        var readAny = false
        while true {
            // One record's plaintext at most per SSL_read: reserving more would make
            // evbuffer allocate (and glibc mmap) a chain per read.
            let room = min(events.readRoom, Self.recordSize)
            guard room > 0 else { break }
            OpenSSLErrorQueue.clearBeforeCall()
            let count = events.withReservedInput(room) { base, length in
                SSL_read(connection.pointer, base, Int32(clamping: length))
            }
            if count > 0 {
                readAny = true
                // Nothing more buffered in OpenSSL: the socket's readiness tells when to go on.
                if SSL_has_pending(connection.pointer) == 0 { break }
                continue
            }
            switch SSL_get_error(connection.pointer, count) {
            case SSL_ERROR_WANT_READ:
                break
            case SSL_ERROR_WANT_WRITE:
                readWaitsForWritable = true
                events.armWrite(timeout: nil)
            case SSL_ERROR_ZERO_RETURN:
                // close_notify: the only end that says nothing was cut.
                return endStream(.endOfStream, afterReading: readAny)
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                // A reset beneath TLS.
                return endStream(errno == 0 || errno == ECONNRESET ? .incompleteClose : .failed(String(cString: strerror(errno))),
                                 afterReading: readAny)
            case SSL_ERROR_SSL where Self.isUnexpectedEOF(ERR_peek_error()):
                // An EOF without close_notify.
                return endStream(.incompleteClose, afterReading: readAny)
            default:
                return endStream(.tlsFailed(OpenSSLError.describeQueue(fallback: "TLS read failed")), afterReading: readAny)
            }
            break
        }
        if readAny { delegate?.streamDidRead(self) }
    }

    private func endStream(_ ending: StreamEnd, afterReading readAny: Bool) {
        if ending != .endOfStream { hasFailed = true }
        events.stopReading()
        if readAny { delegate?.streamDidRead(self) }
        if isOpen { delegate?.stream(self, didEnd: ending) }
    }

    // MARK: writing

    /// Queues `bytes`; `flush` sends them (a head and the body bytes behind it
    /// leave in one record).
    func write(_ bytes: [UInt8]) {
        guard isOpen else { return }
        output.append(bytes)
    }

    /// The largest `SSL_write`: one record.
    static let recordSize = 16 * 1024

    /// Sends the output at the end of this loop pass, in records of up to
    /// `recordSize` (`StreamEvents.scheduleWrite`, as `PlainStream.flush`):
    /// the requests one pass sends upstream leave together, after every read
    /// of that pass, and the upstream woken by the first finds the others
    /// ready. Behind an armed write event the socket is full (its drain
    /// writes); behind a write that waits for a read, the read event writes.
    /// A delegate that waits for the output to be written hears `streamDidDrain`.
    func flush() {
        guard isOpenForData, !output.isEmpty, !writeWaitsForReadable else { return }
        events.scheduleWrite()
    }

    /// At the end of the pass, as `flush`: an `SSL_write` may need a read
    /// first or fail, and either is reported to the delegate, which only the
    /// stream's own callbacks may do.
    func flushMessageEnd() { flush() }

    /// Writes the output record by record until it is empty (then the write
    /// event goes, unless a report waits on it) or OpenSSL asks to wait: for
    /// the socket to take more (the write event, with the write timeout) or
    /// for a read (a key update to read first). A failure is reported from
    /// the write callback (`deferredEnding`).
    private func writeRecords() {
        guard isOpenForData, let connection else { return }
        while !output.isEmpty {
            let length = pendingWrite > 0 ? pendingWrite : min(output.count, Self.recordSize)
            OpenSSLErrorQueue.clearBeforeCall()
            let written = output.withContiguousPrefix(count: length) { SSL_write(connection.pointer, $0.baseAddress, Int32($0.count)) }
            if written > 0 {
                output.drain(Int(written))
                pendingWrite = 0
                continue
            }
            pendingWrite = length
            switch SSL_get_error(connection.pointer, written) {
            case SSL_ERROR_WANT_WRITE:
                events.armWrite(timeout: events.writeTimeout)
            case SSL_ERROR_WANT_READ:
                writeWaitsForReadable = true
                events.armRead(timeout: nil)
            default:
                deferredEnding = .tlsFailed(OpenSSLError.describeQueue(fallback: "TLS write failed"))
                events.activateWrite()
            }
            return
        }
        if !events.hasPendingActivation { events.disarmWrite() }
        if closesWriteWhenDrained { closeWriteSide() }
    }

    func setWriteLowWatermark(_ low: Int) { events.writeLowWatermark = low }

    func setWriteTimeout(_ timeout: EventTimeout?) { events.writeTimeout = timeout }

    /// `shutdownWrite` was asked for: the write side closes once the output is written.
    private var closesWriteWhenDrained = false
    /// The socket's write side is shut (`closeWriteSide`).
    private var closedWriteSide = false
    /// close_notify was sent (at most once: by `closeWriteSide` or `close`).
    private var sentCloseNotify = false

    /// Half-closes, as `PlainStream.shutdownWrite`: once the output is
    /// written, close_notify goes out and the socket's write side is shut.
    /// Records the peer still sends can be read on (OpenSSL reads after its
    /// own close_notify) until the peer's close_notify or its end of stream.
    func shutdownWrite() {
        closesWriteWhenDrained = true
        if output.isEmpty { closeWriteSide() }
    }

    private func closeWriteSide() {
        guard !closedWriteSide, events.isOpen else { return }
        closedWriteSide = true
        sendCloseNotify()
        _ = shutdown(events.descriptor, Int32(SHUT_WR))
    }

    /// close_notify, when the connection is up, has not failed and is not to
    /// be reset; once. One attempt, never waited for: the socket may be
    /// full, the peer gone.
    private func sendCloseNotify() {
        guard isOpenForData, !hasFailed, !resets, !sentCloseNotify, events.isOpen, let connection else { return }
        sentCloseNotify = true
        ERR_clear_error()
        _ = SSL_shutdown(connection.pointer)
        ERR_clear_error()
    }

    // MARK: events (StreamEventsOwner)

    /// Records OpenSSL read from the socket and has not decrypted into the
    /// input yet: a request that came in the same read as the client's
    /// Finished (read-ahead takes the socket's every byte), or what was left
    /// when the input filled up. Never during the handshake, which is driven
    /// by the socket alone.
    var holdsUnreadInput: Bool {
        guard isOpenForData, let connection else { return false }
        return SSL_has_pending(connection.pointer) != 0
    }

    func eventsDidFireRead(timedOut: Bool) {
        guard isOpenForData else { return advanceHandshake(fromCallback: true) }
        if timedOut { return delegate?.stream(self, didEnd: .timedOut(reading: true)) ?? () }
        if writeWaitsForReadable {
            writeWaitsForReadable = false
            writeRecords()
        }
        readRecords()
    }

    func eventsDidFireWrite(timedOut: Bool) {
        _ = events.consumeActivation()
        if let ending = deferredEnding {
            deferredEnding = nil
            hasFailed = true
            events.disarmAll()
            return delegate?.stream(self, didEnd: ending) ?? ()
        }
        if connectPending {
            connectPending = false
            events.disarmWrite()
            delegate?.streamDidConnect(self)
            return
        }
        guard isOpenForData else { return advanceHandshake(fromCallback: true) }
        if timedOut { return delegate?.stream(self, didEnd: .timedOut(reading: false)) ?? () }
        if readWaitsForWritable {
            readWaitsForWritable = false
            readRecords()
        }
        writeRecords()
        if output.count <= events.writeLowWatermark { delegate?.streamDidDrain(self) }
    }
}

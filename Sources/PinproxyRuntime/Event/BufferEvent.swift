internal import CLibevent
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
    weak var delegate: BufferEventDelegate?
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

    func enableRead() { if let raw { bufferevent_enable(raw, EventFlags.read) } }
    func disableRead() { if let raw { bufferevent_disable(raw, EventFlags.read) } }
    func enableReadWrite() { if let raw { bufferevent_enable(raw, EventFlags.readWrite) } }

    /// The write callback fires when output drains to `low` bytes or fewer.
    func setWriteLowWatermark(_ low: Int) { if let raw { bufferevent_setwatermark(raw, EventFlags.write, low, 0) } }
    /// libevent stops reading from the socket while input holds `high` bytes.
    func setReadHighWatermark(_ high: Int) { if let raw { bufferevent_setwatermark(raw, EventFlags.read, 0, high) } }

    /// Read and write inactivity timeouts; nil clears.
    func setTimeouts(read: Duration?, write: Duration?) {
        guard let raw else { return }
        var readValue = read.map(timeval.init(duration:)) ?? timeval()
        var writeValue = write.map(timeval.init(duration:)) ?? timeval()
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
        let event = Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue()
        event.delegate?.bufferEventDidRead(event)
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

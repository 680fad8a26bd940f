/// A connection's bytes both ways, as the proxy layer sees them: an input and
/// an output buffer, reading switched on and off, output written at once with
/// the rest watched for. `PlainStream` (a client socket) and `TLSStream` (a
/// TLS connection) are the two kinds; a session runs over either.
protocol ByteStream: AnyObject {
    /// Bytes received and not yet consumed.
    var input: EventBuffer { get }
    /// Bytes queued to send.
    var output: EventBuffer { get }
    /// Receives the stream's events. Unowned: every delegate owns its stream
    /// (directly or through what it owns) and closes it before going away.
    var delegate: ByteStreamDelegate? { get set }
    var isOpen: Bool { get }
    /// Reads as bytes arrive (until `input` holds the high watermark);
    /// `timeout`, when given, ends the stream with `.timedOut(reading: true)`
    /// after that long without a byte. Calling it again re-arms the timeout.
    func startReading(timeout: EventTimeout?)
    func stopReading()
    /// Writes what is queued at the end of this loop pass, as much as the
    /// socket takes; the rest is written as it drains (with the write
    /// timeout), and `streamDidDrain` reports when `output` is down to the
    /// low watermark.
    func flush()
    /// `flush` for the end of a message: what is queued leaves now, before
    /// the work its caller does next, where the stream can send it now
    /// without reporting to its delegate (a plain socket not known to be
    /// full). The end of the pass then writes what the socket did not take
    /// and reports the drain, as after `flush`.
    func flushMessageEnd()
    /// Writes `bytes` now if nothing is queued ahead of them, else queues them.
    func write(_ bytes: [UInt8])
    /// `streamDidDrain` fires once `output` holds at most `low` bytes.
    func setWriteLowWatermark(_ low: Int)
    /// Reading pauses while `input` holds `high` bytes or more.
    func setReadHighWatermark(_ high: Int)
    /// How long a write may wait for the peer to take bytes (nil: forever).
    func setWriteTimeout(_ timeout: EventTimeout?)
    /// Half-closes: once the output is written the peer reads the end of the
    /// stream (a FIN; on TLS, close_notify and then the FIN). Reading is left
    /// as it is: a caller that reads on hears the peer's own end.
    func shutdownWrite()
    /// Closes the connection and frees everything it holds. Idempotent.
    func close()
    /// The coming `close` resets the connection (TCP RST: SO_LINGER of
    /// zero) and, on TLS, sends no close_notify, so that the peer sees the
    /// connection cut, never an orderly end. What is still queued is dropped.
    func resetOnClose()
}

/// One method per stream event; the streams' C callbacks only forward here.
protocol ByteStreamDelegate: AnyObject {
    func streamDidRead(_ stream: ByteStream)
    func streamDidDrain(_ stream: ByteStream)
    func stream(_ stream: ByteStream, didEnd ending: StreamEnd)
    /// A TLS stream's handshake completed (its verify callback accepted).
    func streamDidConnect(_ stream: ByteStream)
}

extension ByteStreamDelegate {
    func streamDidConnect(_ stream: ByteStream) {}
}

/// How a stream stopped working.
enum StreamEnd: Sendable, Equatable, CustomStringConvertible {
    /// The peer closed its side cleanly: a TCP FIN on a plain socket, a
    /// close_notify on TLS. During a TLS handshake, any close or reset:
    /// the peer went away before a byte of data (`handshakeEnding`).
    case endOfStream
    /// A TLS peer's connection ended without close_notify: an EOF or a reset
    /// beneath TLS (RFC 9112 §9.8's "incomplete close"). A message whose own
    /// framing says it is whole is whole; a body delimited by the close is
    /// cut (RFC 9112 §8), which is what a truncation attack forges.
    case incompleteClose
    /// A read or write on the socket failed: reset, broken pipe.
    case failed(String)
    /// The TLS layer failed (handshake or record), in OpenSSL's words.
    case tlsFailed(String)
    /// The read or write timeout ran out.
    case timedOut(reading: Bool)

    var description: String {
        switch self {
        case .endOfStream: "end of stream"
        case .incompleteClose: "end of stream without TLS close_notify"
        case let .failed(detail), let .tlsFailed(detail): detail
        case let .timedOut(reading): reading ? "read timeout" : "write timeout"
        }
    }
}

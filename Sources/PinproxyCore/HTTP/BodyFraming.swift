/// How the body of a message is delimited (RFC 9112 §6.3).
///
/// The runtime moves body bytes itself; this value tells it how many, or that a
/// `ChunkedFramer` must find the end.
public enum BodyFraming: Sendable, Hashable {
    /// No body at all (no framing fields, HEAD responses, 1xx, 204, 304).
    case none
    /// Exactly this many bytes follow the head.
    case contentLength(UInt64)
    /// `Transfer-Encoding: chunked`, validated by `ChunkedFramer`.
    case chunked
    /// Responses only: the body ends when the upstream closes the connection.
    case untilClose

    /// No body byte follows the head: no body at all, or a length of zero.
    public var isEmpty: Bool { self == .none || self == .contentLength(0) }
}

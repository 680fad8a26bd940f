/// Why a message was refused, as the status to answer with.
///
/// Requests use 400, 405, 414, 431 and 501; an invalid upstream response is
/// always 502. `reason` is a short lower-case phrase for logs and for the
/// `details` of a `Proxy-Status` field, never user input echoed back.
public struct HTTPError: Error, Sendable, Hashable {
    public var status: Int
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    /// A malformed or ambiguous request (RFC 9112 §3, §5, §6).
    static func badRequest(_ reason: String) -> HTTPError { HTTPError(status: 400, reason: reason) }
}

/// The HTTP/1.x version of a message (RFC 9112 §2.3).
///
/// Only major version 1 exists on this wire: `HTTP/1.0` is `.http10`, and any
/// `HTTP/1.x` with x ≥ 1 is treated as `.http11` (RFC 9110 §6.2: a recipient
/// handles a higher minor version as the highest minor version it implements).
public enum HTTPVersion: Sendable, Hashable {
    case http10, http11

    /// The protocol text as written in a start line (`HTTP/1.1`).
    public var text: String {
        switch self {
        case .http10: "HTTP/1.0"
        case .http11: "HTTP/1.1"
        }
    }

    /// Maps the two digits of `HTTP/<major>.<minor>`; nil for any major other than 1.
    init?(major: UInt8, minor: UInt8) {
        guard major == 1 else { return nil }
        self = minor == 0 ? .http10 : .http11
    }
}

/// The outcome of offering the bytes received so far to a head parser.
///
/// `.incomplete` promises that the bytes are a valid prefix within the limits;
/// `consumed` counts exactly the bytes of the head (including the empty line),
/// so pipelined bytes after it stay in the buffer.
public enum HeadParseResult<Head: Sendable>: Sendable {
    case incomplete
    case complete(Head, consumed: Int)
    case invalid(HTTPError)
}

extension HeadParseResult: Equatable where Head: Equatable {}

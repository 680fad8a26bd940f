/// The last `Host` field value a client connection sent, as received, and the
/// endpoint it parsed to. A keep-alive client names the same authority on
/// every request, and parsing it again (the authority's syntax, the name's
/// checks and normalisation) cost some 1,000 instructions a request.
///
/// Parsing is a pure function of the bytes, so a value equal byte for byte to
/// the remembered one has the remembered result; anything else is parsed
/// afresh. Only a value that parsed is remembered, and only one of at most
/// `capacity` bytes, kept inline: the memo never allocates, and a longer
/// value is simply parsed every time. A connection's first value is not
/// remembered: a `Connection: close` client never sends a second, and
/// keeping it cost such a request some 140 instructions for nothing.
struct HostFieldMemo: Sendable {
    static let capacity = 32

    private typealias Words = (UInt64, UInt64, UInt64, UInt64)

    private var seenOne = false
    /// The remembered value's length and bytes (zero after `length`), and its
    /// endpoint (nil: nothing is remembered).
    private var length = 0
    private var bytes: Words = (0, 0, 0, 0)
    private var endpoint: Endpoint?

    /// `parse(value)`, or the remembered endpoint when `value` is the remembered value.
    mutating func endpoint(for value: UnsafeRawBufferPointer,
                           parse: (UnsafeRawBufferPointer) -> Result<Endpoint, HTTPError>) -> Result<Endpoint, HTTPError> {
        guard seenOne else { seenOne = true; return parse(value) }
        guard value.count <= Self.capacity else { return parse(value) }
        let words = Self.words(value)
        if value.count == length, let endpoint, words == bytes { return .success(endpoint) }
        let result = parse(value)
        if case let .success(parsed) = result {
            bytes = words
            length = value.count
            endpoint = parsed
        }
        return result
    }

    /// `value` (at most `capacity` bytes) zero-padded to four words.
    private static func words(_ value: UnsafeRawBufferPointer) -> Words {
        var words: Words = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: value) }
        return words
    }
}

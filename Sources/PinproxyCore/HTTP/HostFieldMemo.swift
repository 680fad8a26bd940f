/// The last `Host` field value a loop's clients sent, as received, and the
/// endpoint it parsed to. Clients of one listener name the same authority on
/// request after request, across connections as within one (a gateway's
/// clients, a script fetching from one host), and parsing it again (the
/// authority's syntax, the name's checks and normalisation) cost some 1,100
/// instructions a request, paid before the request could go upstream.
///
/// Parsing is a pure function of the bytes, so a value equal byte for byte to
/// the remembered one has the remembered result, whichever connection sent
/// either; anything else is parsed afresh. Only a value that parsed is
/// remembered, and only one of at most `capacity` bytes, kept inline: the
/// memo never allocates, and a longer value is simply parsed every time. The
/// loop owns it and lends it to the session that routes a head
/// (`SessionMachine.handle(_:into:lending:hostMemo:)`), so no connection
/// carries one.
public struct HostFieldMemo: Sendable {
    static let capacity = 32

    private typealias Words = (UInt64, UInt64, UInt64, UInt64)

    /// The remembered value's length and bytes (zero after `length`), and its
    /// endpoint (nil: nothing is remembered).
    private var length = 0
    private var bytes: Words = (0, 0, 0, 0)
    private var endpoint: Endpoint?

    public init() {}

    /// `parse(value)`, or the remembered endpoint when `value` is the remembered value.
    mutating func endpoint(for value: UnsafeRawBufferPointer,
                           parse: (UnsafeRawBufferPointer) -> Result<Endpoint, HTTPError>) -> Result<Endpoint, HTTPError> {
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

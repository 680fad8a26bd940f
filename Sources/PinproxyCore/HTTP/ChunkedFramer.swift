/// Incremental validator/normaliser of a chunked body (RFC 9112 §7.1). The
/// runtime moves chunk DATA itself.
///
/// Protocol: the runtime calls `next(_:)` with the bytes buffered at the
/// current body position. `.control` and `.done` say how many bytes to drain
/// and what to write downstream instead (a normalised size line without
/// extensions, or the CRLF after data); `.data(remaining:)` says that the
/// next bytes are payload, which the runtime moves itself and reports with
/// `didPassData(_:)`. Nothing here ever looks at payload bytes.
///
/// Invariants: after `.invalid` every call returns the same error; after
/// `.done` every call returns `.done(consumed: 0, emit: [])`.
public struct ChunkedFramer: Sendable {
    /// Trailer fields are validated and dropped; their section is bounded.
    static let maxTrailerBytes = 8192

    public enum Step: Sendable, Hashable {
        /// The control line is not complete in `bytes`.
        case needMore
        /// Consumed a control region (size line, CRLF after data); write `emit`
        /// downstream instead (normalised: "<lower-hex>\r\n", "\r\n").
        case control(consumed: Int, emit: [UInt8])
        /// The next `remaining` bytes are chunk data: the runtime moves up to
        /// that many and calls `didPassData`.
        case data(remaining: UInt64)
        /// Last-chunk and trailer section consumed; emit "0\r\n\r\n".
        case done(consumed: Int, emit: [UInt8])
        /// 400: bad hex, overflow, missing CRLF, bare LF, bad trailer field.
        case invalid(HTTPError)
    }

    private enum State: Sendable, Hashable {
        case sizeLine
        case data(remaining: UInt64)
        case dataEnd
        case done
        case failed(HTTPError)
    }

    private var state = State.sizeLine

    public init() {}

    /// True once the last chunk and the trailer section have been consumed.
    public var isDone: Bool { state == .done }

    public mutating func next(_ bytes: UnsafeRawBufferPointer) -> Step {
        switch state {
        case .failed(let error):
            return .invalid(error)
        case .done:
            return .done(consumed: 0, emit: [])
        case .data(let remaining):
            return .data(remaining: remaining)
        case .dataEnd:
            // RFC 9112 §7.1: chunk-data is followed by exactly CRLF.
            guard bytes.count > 0 else { return .needMore }
            guard bytes[0] == HTTPSyntax.cr else { return fail("missing crlf after chunk data") }
            guard bytes.count > 1 else { return .needMore }
            guard bytes[1] == HTTPSyntax.lf else { return fail("missing crlf after chunk data") }
            state = .sizeLine
            return .control(consumed: 2, emit: Self.crlf)
        case .sizeLine:
            switch ChunkSizeLine.scan(bytes, from: 0) {
            case .needMore:
                return .needMore
            case .invalid(let reason):
                return fail(reason)
            case .parsed(let size, let end) where size > 0:
                state = .data(remaining: size)
                return .control(consumed: end, emit: Array(String(size, radix: 16).utf8) + Self.crlf)
            case .parsed(_, let end):
                return trailerSection(bytes, from: end)
            }
        }
    }

    /// The runtime moved `count` payload bytes of the current chunk.
    ///
    /// Moving more than `.data(remaining:)` allowed is a bug in the caller,
    /// not peer input, hence the precondition.
    public mutating func didPassData(_ count: UInt64) {
        guard case .data(let remaining) = state else {
            preconditionFailure("didPassData(\(count)) outside chunk data")
        }
        precondition(count <= remaining, "didPassData(\(count)) beyond the \(remaining) bytes of the chunk")
        state = remaining == count ? .dataEnd : .data(remaining: remaining - count)
    }

    /// After `last-chunk`: `trailer-section CRLF`, validated like header fields
    /// (RFC 9112 §7.1.2) and dropped; the whole region is consumed at once.
    private mutating func trailerSection(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Step {
        let limit = min(bytes.count, start + Self.maxTrailerBytes)
        var lines: [FieldSection.Line] = []
        switch FieldLineScanner.scan(bytes, from: start, limit: limit, into: &lines) {
        case .needMore:
            return bytes.count - start >= Self.maxTrailerBytes ? fail("trailer section too large") : .needMore
        case .invalid(let reason):
            return fail("invalid trailer: \(reason)")
        case .complete(let end):
            state = .done
            return .done(consumed: end, emit: Self.lastChunk)
        }
    }

    private mutating func fail(_ reason: String) -> Step {
        let error = HTTPError.badRequest(reason)
        state = .failed(error)
        return .invalid(error)
    }

    private static let crlf: [UInt8] = [HTTPSyntax.cr, HTTPSyntax.lf]
    private static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}

import Foundation
import PinproxyCore

/// Moves one message body from a source evbuffer to a destination evbuffer
/// according to its framing, without the payload entering Swift: data moves
/// by `evbuffer_remove_buffer`; only chunk-size lines and trailers are read
/// (and re-emitted normalised, so the next hop sees unambiguous framing).
struct BodyRelay {
    private enum State {
        case remaining(UInt64)
        case chunked(ChunkedFramer)
        case untilClose
        case done
    }

    private var state: State
    /// Chunked data passed on without chunk framing: for an HTTP/1.0 client,
    /// which cannot read chunked and gets a body delimited by close instead.
    private let dropsChunkFraming: Bool

    /// A chunk-size line (with extensions) plus a trailer section never need more.
    static let maximumControlBytes = 16 * 1024

    init(framing: BodyFraming, dropsChunkFraming: Bool = false) {
        self.dropsChunkFraming = dropsChunkFraming
        switch framing {
        case .none, .contentLength(0): state = .done
        case let .contentLength(length): state = .remaining(length)
        case .chunked: state = .chunked(ChunkedFramer())
        case .untilClose: state = .untilClose
        }
    }

    var isComplete: Bool { if case .done = state { return true } else { return false } }

    /// Whether the body is chunked: only then has it framing of its own to
    /// check (`bufferedFramingError`).
    var isChunked: Bool { if case .chunked = state { return true } else { return false } }

    /// The framing error in the body bytes `source` already holds from
    /// `start` on, if any, found without moving or draining them (SPEC §3:
    /// body bytes that arrived with the head are validated before the head
    /// goes on, so an invalid chunk-size line already received means the
    /// head is not sent: a request gets its 400 with nothing sent upstream,
    /// a response its 502 with nothing sent to the client).
    ///
    /// Walks a copy of the framer over the buffered bytes: control lines are
    /// copied out (bounded), chunk data is skipped by offset and never read.
    /// Only chunked bodies have framing to check; other bodies are opaque.
    func bufferedFramingError(in source: EventBuffer, from start: Int = 0) -> HTTPError? {
        guard case var .chunked(framer) = state else { return nil }
        let buffered = source.count
        var offset = start
        while offset < buffered {
            var step = source.withCopy(from: offset, count: 64) { framer.next($0) }
            if case .needMore = step, buffered - offset > 64 {
                step = source.withCopy(from: offset, count: BodyRelay.maximumControlBytes) { framer.next($0) }
            }
            switch step {
            case .needMore, .done:
                return nil
            case let .invalid(error):
                return error
            case let .control(consumed, _):
                offset += consumed
            case let .data(remaining):
                let skipped = min(UInt64(buffered - offset), remaining)
                framer.didPassData(skipped)
                offset += Int(skipped)
            }
        }
        return nil
    }
    var isDelimitedByClose: Bool { if case .untilClose = state { return true } else { return false } }

    /// Body bytes moved so far (chunk framing not counted), for the access log.
    private(set) var movedBytes: UInt64 = 0

    /// Moves as much of the body as the source holds.
    mutating func pump(from source: EventBuffer, to destination: EventBuffer) -> BodyProgress {
        while true {
            switch state {
            case .done:
                return .complete
            case .untilClose:
                movedBytes &+= UInt64(source.count)
                source.moveAll(to: destination)
                return .needMore
            case let .remaining(count):
                let available = source.count
                guard available > 0 else { return .needMore }
                let moved = source.move(to: destination, count: Int(min(UInt64(available), count)))
                movedBytes &+= UInt64(moved)
                let left = count - UInt64(moved)
                state = left == 0 ? .done : .remaining(left)
                if left > 0 { return .needMore }
            case var .chunked(framer):
                // Most control lines are a few bytes: look at a short prefix first
                // and pull up the bounded maximum only when that is not enough.
                var step = source.withContiguousPrefix(count: 64) { framer.next($0) }
                if case .needMore = step, source.count > 64 {
                    step = source.withContiguousPrefix(count: BodyRelay.maximumControlBytes) { framer.next($0) }
                }
                switch step {
                case .needMore:
                    state = .chunked(framer)
                    return .needMore
                case let .data(remaining):
                    let available = source.count
                    guard available > 0 else { state = .chunked(framer); return .needMore }
                    let moved = source.move(to: destination, count: Int(min(UInt64(available), remaining)))
                    movedBytes &+= UInt64(moved)
                    framer.didPassData(UInt64(moved))
                    state = .chunked(framer)
                case let .control(consumed, emit):
                    source.drain(consumed)
                    if !dropsChunkFraming { destination.append(emit) }
                    state = .chunked(framer)
                case let .done(consumed, emit):
                    source.drain(consumed)
                    if !dropsChunkFraming { destination.append(emit) }
                    state = .done
                case let .invalid(error):
                    state = .chunked(framer)
                    return .invalid(error)
                }
            }
        }
    }
}

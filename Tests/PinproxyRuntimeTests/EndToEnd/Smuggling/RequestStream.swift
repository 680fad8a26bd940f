import Foundation
@testable import PinproxyCore

/// A byte stream of requests read with pinproxy's own parsers (`RequestHeadParser`,
/// `RequestRouter`, `ChunkedFramer`), one message after another, as the
/// daemon reads a client connection: the oracle of the desync tests.
///
/// Read from what a client sends, it says what pinproxy must forward and where
/// it must refuse; read from what the origin received, it must find exactly
/// the requests the origin's own (lenient) parser found.
struct RequestStream {
    struct Request: Equatable, CustomStringConvertible {
        var method: String
        var target: String
        var bodyLength: Int
        var description: String { "\(method) \(target) (\(bodyLength) body bytes)" }
    }

    /// How reading stopped.
    enum Ending: Equatable {
        /// Every byte belonged to a complete request.
        case complete
        /// A refusal with this status: nothing of that message may go upstream.
        case refused(Int)
        /// The last message was not complete when the bytes ended.
        case incomplete
        /// A request that asked to close the connection; the rest is ignored.
        case closed
    }

    var requests: [Request] = []
    var ending = Ending.complete

    /// Reads `bytes` as a client connection on a forward listener (`routes`:
    /// routing failures refuse too, as the daemon does) or as an upstream
    /// connection (origin-form, no routing).
    init(_ bytes: [UInt8], routes: Bool) {
        var offset = 0
        while offset < bytes.count {
            let rest = Array(bytes[offset...])
            let parsed = rest.withUnsafeBytes { RequestHeadParser.parse($0, limits: HeadLimits()) }
            switch parsed {
            case .incomplete:
                ending = .incomplete
                return
            case let .invalid(error):
                ending = .refused(error.status)
                return
            case let .complete(head, consumed):
                var target = head.target
                if routes {
                    switch RequestRouter.routeForward(head) {
                    case let .failure(error): ending = .refused(error.status); return
                    case let .success(routed): target = routed.originFormTarget
                    }
                }
                offset += consumed
                var length = 0
                switch head.bodyFraming {
                case .none, .untilClose:
                    break
                case let .contentLength(declared):
                    guard bytes.count - offset >= Int(declared) else { ending = .incomplete; return }
                    length = Int(declared)
                    offset += length
                case .chunked:
                    switch Self.chunkedBody(bytes, from: offset) {
                    case let .failure(error): ending = .refused(error.status); return
                    case .success(nil): ending = .incomplete; return
                    case let .success((data, consumed)?):
                        length = data
                        offset += consumed
                    }
                }
                requests.append(Request(method: head.method, target: target, bodyLength: length))
                if !head.wantsKeepAlive {
                    ending = .closed
                    return
                }
            }
        }
    }

    /// Walks a chunked body from `start`: (payload bytes, bytes consumed), nil while incomplete.
    static func chunkedBody(_ bytes: [UInt8], from start: Int) -> Result<(Int, Int)?, HTTPError> {
        var framer = ChunkedFramer()
        var offset = start
        var data = 0
        while true {
            let step = Array(bytes[offset...]).withUnsafeBytes { framer.next($0) }
            switch step {
            case .needMore: return .success(nil)
            case let .invalid(error): return .failure(error)
            case let .control(consumed, _): offset += consumed
            case let .done(consumed, _): return .success((data, offset + consumed - start))
            case let .data(remaining):
                let available = UInt64(bytes.count - offset)
                guard available > 0 else { return .success(nil) }
                let moved = min(available, remaining)
                framer.didPassData(moved)
                offset += Int(moved)
                data += Int(moved)
            }
        }
    }
}

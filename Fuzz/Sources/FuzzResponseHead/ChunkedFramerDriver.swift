import FuzzSupport
import PinproxyCore

/// Drives a `ChunkedFramer` over a body the way the runtime does, with the
/// bytes arriving in two parts, and checks its accounting.
///
/// Invariants: a step never consumes more than it was given, nor zero bytes
/// for a control step; `.data(remaining:)` right after a size line equals
/// the size that line announced, and the payload passed per chunk adds up to
/// it; after `.done` or `.invalid` the framer repeats itself; the outcome
/// (bytes consumed, normalised output, payload, error) does not depend on
/// where the input was split; and a normalised chunked stream is a fixed
/// point (re-framing it consumes it whole and emits it unchanged).
enum ChunkedFramerDriver {
    enum End: Equatable {
        case done
        case needMore
        case invalid(HTTPError)
    }

    /// What one drive produced: the stream it would forward is `output`.
    struct Outcome: Equatable {
        var end: End
        var consumed: Int
        var output: [UInt8]
        var payloadBytes: UInt64
    }

    static func checkSplitInvariance(_ body: [UInt8], split: Int) {
        let whole = drive(body, arrivals: [body.count])
        let parts = drive(body, arrivals: [split, body.count])
        Invariant.check(whole == parts, "split at \(split) gives \(parts), whole gives \(whole)")
        let bytewise = body.count <= 64 ? drive(body, arrivals: Array(0...body.count)) : whole
        Invariant.check(whole == bytewise, "byte-by-byte arrival gives \(bytewise), whole gives \(whole)")
        if whole.end == .done {
            let again = drive(whole.output, arrivals: [whole.output.count])
            Invariant.check(again == Outcome(end: .done, consumed: whole.output.count, output: whole.output,
                                             payloadBytes: whole.payloadBytes),
                            "normalised stream is not a fixed point: \(again)")
        }
    }

    /// Feeds `body` as it arrives (`arrivals` are the successive amounts
    /// available, ending with `body.count`) and records the outcome.
    static func drive(_ body: [UInt8], arrivals: [Int]) -> Outcome {
        var framer = ChunkedFramer()
        var arrival = 0
        var available = arrivals[0]
        var position = 0
        var output: [UInt8] = []
        var payload: UInt64 = 0
        var announced: UInt64?
        var chunkLeft: UInt64 = 0
        func outcome(_ end: End) -> Outcome {
            Outcome(end: end, consumed: position, output: output, payloadBytes: payload)
        }
        // Each iteration consumes a byte or receives more; the bound is a backstop.
        for _ in 0...(4 * body.count + 16) {
            let given = available - position
            let step = body[position..<available].withUnsafeBytes { framer.next($0) }
            switch step {
            case .needMore:
                Invariant.check(announced == nil, "needMore right after a size line")
                guard arrival + 1 < arrivals.count else { return outcome(.needMore) }
                arrival += 1
                available = arrivals[arrival]
            case .control(let consumed, let emit):
                Invariant.check(consumed > 0 && consumed <= given, "control consumed \(consumed) of \(given)")
                Invariant.check(chunkLeft == 0, "control step inside chunk data")
                position += consumed
                output += emit
                if emit != [13, 10] {
                    let hex = String(decoding: emit.dropLast(2), as: UTF8.self)
                    Invariant.check(emit.suffix(2) == [13, 10], "size line \(emit) without CRLF")
                    announced = UInt64(hex, radix: 16)
                    Invariant.check(announced.map { $0 > 0 && String($0, radix: 16) == hex } ?? false,
                                    "emitted size line \(hex.debugDescription) is not lower-case hex")
                }
            case .data(let remaining):
                if let size = announced {
                    Invariant.check(remaining == size, "data \(remaining) after size line \(size)")
                    chunkLeft = size
                    announced = nil
                }
                Invariant.check(remaining == chunkLeft && remaining > 0, "data \(remaining), chunk has \(chunkLeft)")
                let moved = min(remaining, UInt64(given))
                if moved == 0 {
                    guard arrival + 1 < arrivals.count else { return outcome(.needMore) }
                    arrival += 1
                    available = arrivals[arrival]
                    continue
                }
                output += body[position..<position + Int(moved)]
                position += Int(moved)
                payload += moved
                chunkLeft -= moved
                framer.didPassData(moved)
            case .done(let consumed, let emit):
                Invariant.check(consumed > 0 && consumed <= given, "done consumed \(consumed) of \(given)")
                Invariant.check(emit == Array("0\r\n\r\n".utf8) && framer.isDone, "done emitted \(emit)")
                position += consumed
                output += emit
                let after = body[position..<available].withUnsafeBytes { framer.next($0) }
                Invariant.check(after == .done(consumed: 0, emit: []), "after done: \(after)")
                return outcome(.done)
            case .invalid(let error):
                Invariant.check(error.status == 400, "framing error with status \(error.status)")
                let after = body[position..<available].withUnsafeBytes { framer.next($0) }
                Invariant.check(after == .invalid(error), "after invalid: \(after)")
                return outcome(.invalid(error))
            }
        }
        Invariant.check(false, "framer made no progress over \(body.count) bytes")
        return outcome(.needMore)
    }
}

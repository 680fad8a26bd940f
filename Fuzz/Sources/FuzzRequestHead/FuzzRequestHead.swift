import FuzzSupport
import PinproxyCore

/// libFuzzer harness over `RequestHeadParser.parse` (RFC 9112 §2–§6).
///
/// Invariants, beyond "no crash":
/// - `consumed` is within the input and a complete head re-serialised
///   (method SP target SP version CRLF, fields, CRLF) parses to the same head;
/// - a complete head never carries both Content-Length and Transfer-Encoding;
/// - 431 only when the input reaches `maxHeaderBytes`, 414 only when it is
///   longer than `maxTargetBytes`;
/// - the parser is stateless and incremental: a prefix that is refused (other
///   than 431) means the whole input is refused the same way, a whole input
///   still incomplete means every prefix is, and the head alone parses alike;
/// - relay round trip (SPEC §3): whatever head is accepted and routed, the head
///   `UpstreamRequestWriter` sends upstream parses again, whole, with the same
///   framing and body length, one Host and no Connection field, and routes to
///   the same upstream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = FuzzInput(data, size)
    // Small limits reach 431/414 within libFuzzer's default input sizes.
    for limits in [HeadLimits(), HeadLimits(maxHeaderBytes: 600, maxTargetBytes: 96)] {
        RequestHeadInvariants.check(input, limits: limits)
    }
    return 0
}

/// The checks of one input under one set of limits.
enum RequestHeadInvariants {
    static func parse(_ bytes: [UInt8], limits: HeadLimits) -> HeadParseResult<HTTPRequestHead> {
        bytes.withUnsafeBytes { RequestHeadParser.parse($0, limits: limits) }
    }

    static func check(_ input: FuzzInput, limits: HeadLimits) {
        let bytes = input.bytes
        let result = parse(bytes, limits: limits)
        switch result {
        case .incomplete:
            Invariant.check(bytes.count < limits.maxHeaderBytes, "incomplete at or over maxHeaderBytes")
        case .invalid(let error):
            switch error.status {
            case 431: Invariant.check(bytes.count >= limits.maxHeaderBytes, "431 under the limit: \(bytes.count)")
            case 414: Invariant.check(bytes.count > limits.maxTargetBytes, "414 under the target limit")
            case 400, 501: break
            default: Invariant.check(false, "unexpected status \(error.status)")
            }
            Invariant.check(!error.reason.isEmpty, "error without a reason")
        case .complete(let head, let consumed):
            Invariant.check(consumed > 0 && consumed <= bytes.count, "consumed \(consumed) of \(bytes.count)")
            Invariant.check(consumed <= limits.maxHeaderBytes, "complete head longer than maxHeaderBytes")
            checkComplete(head, consumed: consumed, bytes: bytes, limits: limits)
        }
        checkPrefix(input, whole: result, limits: limits)
    }

    static func checkComplete(_ head: HTTPRequestHead, consumed: Int, bytes: [UInt8], limits: HeadLimits) {
        let hasLength = !head.values(of: "content-length").isEmpty
        let hasCoding = !head.values(of: "transfer-encoding").isEmpty
        Invariant.check(!(hasLength && hasCoding), "both content-length and transfer-encoding accepted")
        Invariant.check(head.bodyFraming != .untilClose, "request framed until close")
        if head.bodyFraming == .chunked {
            Invariant.check(hasCoding && head.version == .http11, "chunked without transfer-encoding or in 1.0")
        }
        Invariant.check(!head.target.isEmpty && !head.method.isEmpty, "empty method or target")

        // The head alone (pipelined bytes removed) parses to the same head.
        let headOnly = Array(bytes[..<consumed])
        Invariant.check(parse(headOnly, limits: limits) == .complete(head, consumed: consumed),
                        "head alone parses differently")

        // Re-serialised and re-parsed, it is the same head. Obs-text is decoded
        // with replacement characters, which may lengthen the text, so the
        // re-parse gets room for it.
        var text = "\(head.method) \(head.target) \(head.version.text)\r\n"
        for field in head.fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        let serialised = Array(text.utf8)
        let roomy = HeadLimits(maxHeaderBytes: max(limits.maxHeaderBytes, serialised.count + 1),
                               maxTargetBytes: limits.maxTargetBytes)
        let reparsed = parse(serialised, limits: roomy)
        // Compared as Strings: obs-text became U+FFFD in the text above,
        // while the parsed head keeps (and relays) the bytes received.
        var decoded = head
        decoded.fields = head.fields
        Invariant.check(reparsed == .complete(decoded, consumed: serialised.count),
                        "re-serialised head parses as \(reparsed), not \(head)")
        checkRelayed(head, limits: roomy)
    }

    /// The head as relayed upstream, read again by pinproxy's own parser.
    static func checkRelayed(_ head: HTTPRequestHead, limits: HeadLimits) {
        guard case .success(let routed) = RequestRouter.routeForward(head) else { return }
        let relayed = UpstreamRequestWriter.serialise(head, routed: routed)
        let roomy = HeadLimits(maxHeaderBytes: max(limits.maxHeaderBytes, relayed.count + 1),
                               maxTargetBytes: max(limits.maxTargetBytes, relayed.count))
        guard case .complete(let again, let consumed) = parse(relayed, limits: roomy) else {
            Invariant.check(false, "the relayed head does not parse: \(parse(relayed, limits: roomy))")
            return
        }
        Invariant.check(consumed == relayed.count, "the relayed head parses to \(consumed) of \(relayed.count) bytes")
        Invariant.check(again.bodyFraming == head.bodyFraming,
                        "relayed framing \(again.bodyFraming), accepted \(head.bodyFraming)")
        Invariant.check(again.values(of: "host").count == 1 && again.values(of: "connection").isEmpty,
                        "relayed Host \(again.values(of: "host")), Connection \(again.values(of: "connection"))")
        Invariant.check(again.wantsKeepAlive, "the relayed request asks to close")
        guard case .success(let reRouted) = RequestRouter.routeForward(again) else {
            Invariant.check(false, "the relayed head no longer routes")
            return
        }
        Invariant.check(reRouted.upstream == routed.upstream, "relayed to \(reRouted.upstream), routed to \(routed.upstream)")
    }

    static func checkPrefix(_ input: FuzzInput, whole: HeadParseResult<HTTPRequestHead>, limits: HeadLimits) {
        let split = input.splitPoint
        guard split < input.bytes.count else { return }
        let prefix = parse(Array(input.bytes[..<split]), limits: limits)
        switch prefix {
        case .invalid(let error) where error.status != 431:
            Invariant.check(whole == prefix, "prefix refused with \(error) but the whole input gives \(whole)")
        case .complete(let head, let consumed):
            Invariant.check(whole == .complete(head, consumed: consumed), "prefix complete, whole input differs")
        case .incomplete, .invalid:
            break
        }
        if case .incomplete = whole {
            Invariant.check(prefix == .incomplete, "whole input incomplete but prefix gives \(prefix)")
        }
    }
}

/// The entry point SwiftPM links as `main` (see `FuzzerDriver`).
@_cdecl("FuzzRequestHead_main")
public func fuzzRequestHeadMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzerDriver.run(argc, argv, fuzzRequestHead)
}

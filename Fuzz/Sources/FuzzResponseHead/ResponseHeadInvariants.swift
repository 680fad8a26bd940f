import FuzzSupport
import PinproxyCore

/// Invariants of `ResponseHeadParser.parse`: `consumed` within the input; a
/// complete head re-serialised (status line, fields, CRLF) parses to the same
/// head; never both Content-Length and chunked; every refusal is a 502; HEAD
/// and 1xx/204/304 responses have no body (RFC 9112 §6.3); a response framed
/// by close is never kept alive.
enum ResponseHeadInvariants {
    /// Relay round trip (SPEC §3): the head `ClientResponseWriter` writes for
    /// a 1.1 and a 1.0 client parses again, whole, with the framing the client
    /// must read the relayed body by (chunked becomes close-delimited for 1.0),
    /// and at most one framing field.
    static func checkRelayed(_ head: HTTPResponseHead, method: String, limits: HeadLimits) {
        for version in [HTTPVersion.http11, .http10] {
            let relayed = ClientResponseWriter.serialise(head, clientVersion: version, keepAlive: true)
            let roomy = HeadLimits(maxHeaderBytes: max(limits.maxHeaderBytes, relayed.count + 1))
            guard case .complete(let again, let consumed) = parse(relayed, method: method, limits: roomy) else {
                Invariant.check(false, "the relayed head does not parse: \(parse(relayed, method: method, limits: roomy))")
                return
            }
            Invariant.check(consumed == relayed.count, "the relayed head parses to \(consumed) of \(relayed.count) bytes")
            let expected = version == .http10 && head.bodyFraming == .chunked ? .untilClose : head.bodyFraming
            Invariant.check(again.bodyFraming == expected, "relayed framing \(again.bodyFraming), relayed by \(expected)")
            let framingFields = again.values(of: "content-length").count + again.values(of: "transfer-encoding").count
            Invariant.check(framingFields <= 1, "\(framingFields) framing fields relayed")
        }
    }

    static func parse(_ bytes: [UInt8], method: String, limits: HeadLimits = HeadLimits())
        -> HeadParseResult<HTTPResponseHead> {
        bytes.withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: method, limits: limits) }
    }

    /// Returns where the body starts: after a complete head, else 0.
    static func check(_ bytes: [UInt8]) -> Int {
        let limits = HeadLimits()
        let result = parse(bytes, method: "GET")
        let headResult = parse(bytes, method: "HEAD")
        switch result {
        case .incomplete:
            Invariant.check(headResult == .incomplete, "GET incomplete, HEAD \(headResult)")
            return 0
        case .invalid(let error):
            Invariant.check(error.status == 502, "refusal with status \(error.status)")
            Invariant.check(headResult == result, "GET \(result), HEAD \(headResult)")
            return 0
        case .complete(let head, let consumed):
            Invariant.check(consumed > 0 && consumed <= bytes.count, "consumed \(consumed) of \(bytes.count)")
            let hasLength = !head.values(of: "content-length").isEmpty
            let isChunked = !head.values(of: "transfer-encoding").isEmpty
            Invariant.check(!(hasLength && isChunked), "both content-length and transfer-encoding accepted")
            Invariant.check((100...599).contains(head.status) && head.status != 101, "status \(head.status)")
            Invariant.check(head.isInformational == (head.status < 200), "isInformational for \(head.status)")
            if head.status < 200 || head.status == 204 || head.status == 304 {
                Invariant.check(head.bodyFraming == .none, "\(head.status) with a body")
            }
            if head.bodyFraming == .untilClose { Invariant.check(!head.wantsKeepAlive, "kept alive until close") }
            if head.bodyFraming == .chunked { Invariant.check(isChunked, "chunked without transfer-encoding") }
            guard case .complete(let headHead, consumed) = headResult else {
                Invariant.check(false, "GET complete, HEAD \(headResult)")
                return consumed
            }
            Invariant.check(headHead.bodyFraming == .none && headHead.fields == head.fields, "HEAD response framing")

            var text = "\(head.version.text) \(head.status) \(head.reason)\r\n"
            for field in head.fields { text += "\(field.name): \(field.value)\r\n" }
            text += "\r\n"
            let serialised = Array(text.utf8)
            let roomy = HeadLimits(maxHeaderBytes: max(limits.maxHeaderBytes, serialised.count + 1))
            let reparsed = parse(serialised, method: "GET", limits: roomy)
            // Compared as Strings: obs-text became U+FFFD in the text above,
            // while the parsed head keeps (and relays) the bytes received.
            var decoded = head
            decoded.fields = head.fields
            Invariant.check(reparsed == .complete(decoded, consumed: serialised.count),
                            "re-serialised head parses as \(reparsed), not \(head)")
            for method in ["GET", "HEAD"] {
                guard case .complete(let accepted, _) = parse(bytes, method: method) else { continue }
                checkRelayed(accepted, method: method, limits: roomy)
            }
            return consumed
        }
    }
}

/// Parses a request head from the bytes received so far (RFC 9112 §2–§6).
///
/// Called again with the whole buffer whenever more bytes arrive; it keeps no
/// state. Every byte is checked as it is scanned, so an invalid prefix is
/// refused immediately and a head that outgrows a limit is refused before it
/// is complete. Strings are made only once the head is complete.
public enum RequestHeadParser {
    public static func parse(_ bytes: UnsafeRawBufferPointer, limits: HeadLimits) -> HeadParseResult<HTTPRequestHead> {
        var buffers = HeadBuffers()
        return parse(bytes, limits: limits, buffers: &buffers)
    }

    /// The same, its field lines and their copy made in arrays from `buffers`
    /// (given back when the head is not complete).
    public static func parse(_ bytes: UnsafeRawBufferPointer, limits: HeadLimits,
                             buffers: inout HeadBuffers) -> HeadParseResult<HTTPRequestHead> {
        let limit = min(bytes.count, limits.maxHeaderBytes)
        // 431 when the limit is reached without the head being complete.
        let overLimit = bytes.count >= limits.maxHeaderBytes
        func incomplete() -> HeadParseResult<HTTPRequestHead> {
            overLimit ? .invalid(HTTPError(status: 431, reason: "header section too large")) : .incomplete
        }
        func invalid(_ reason: String) -> HeadParseResult<HTTPRequestHead> { .invalid(.badRequest(reason)) }

        var index = 0
        // RFC 9112 §2.2: ignore one empty line before the request-line.
        if limit > 0 && bytes[0] == HTTPSyntax.lf { return invalid("bare lf before request line") }
        if limit > 0 && bytes[0] == HTTPSyntax.cr {
            guard limit > 1 else { return incomplete() }
            guard bytes[1] == HTTPSyntax.lf else { return invalid("bare cr before request line") }
            index = 2
        }

        // method SP: a token, then exactly one space (RFC 9112 §3).
        let methodStart = index
        while true {
            guard index < limit else { return incomplete() }
            let byte = bytes[index]
            if byte == HTTPSyntax.space { break }
            guard HTTPSyntax.isTokenChar(byte) else { return invalid("invalid method") }
            index += 1
        }
        let methodRange = methodStart..<index
        guard !methodRange.isEmpty else { return invalid("empty method") }
        index += 1

        // request-target SP: visible ASCII only; a second space makes it empty.
        let targetStart = index
        while true {
            guard index < limit else { return incomplete() }
            let byte = bytes[index]
            if byte == HTTPSyntax.space { break }
            if index - targetStart >= limits.maxTargetBytes {
                return .invalid(HTTPError(status: 414, reason: "request target too long"))
            }
            guard byte > 0x20 && byte < 0x7F else { return invalid("invalid character in request target") }
            index += 1
        }
        let targetRange = targetStart..<index
        guard !targetRange.isEmpty else { return invalid("empty request target") }
        index += 1

        let version: HTTPVersion
        switch StartLineSyntax.version(bytes, at: index, limit: limit) {
        case .needMore: return incomplete()
        case .invalid(let reason): return invalid(reason)
        case .parsed(let major, let minor, let end):
            guard let known = HTTPVersion(major: major, minor: minor) else { return invalid("unsupported http version") }
            version = known
            index = end
        }
        switch StartLineSyntax.lineEnd(bytes, at: index, limit: limit) {
        case .needMore: return incomplete()
        case .invalid(let reason): return invalid(reason)
        case .parsed(_, _, let end): index = end
        }

        switch FieldLineScanner.section(bytes, from: index, limit: limit, buffers: &buffers) {
        case .needMore: return incomplete()
        case .invalid(let reason): return invalid(reason)
        case let .complete(fields, end):
            return assemble(method: HTTPSyntax.string(bytes, methodRange), target: HTTPSyntax.string(bytes, targetRange),
                            version: version, fields: fields, consumed: end)
        }
    }

    /// Decides framing and persistence for a syntactically valid head.
    private static func assemble(method: String, target: String, version: HTTPVersion,
                                 fields: FieldSection, consumed: Int) -> HeadParseResult<HTTPRequestHead> {
        // SPEC §3: `Content_Length` would frame the body for an origin that maps
        // `_` to `-` (CGI, WSGI), while pinproxy frames it without that field.
        if fields.lines.contains(where: { $0.known == .framingAlias }) {
            return .invalid(.badRequest("field name is a framing field with '_' for '-'"))
        }
        let transferEncoding = FramingFields.transferEncoding(in: fields)
        let contentLength: UInt64?
        switch FramingFields.contentLength(in: fields) {
        case .failure(let error): return .invalid(error)
        case .success(let length): contentLength = length
        }
        let framing: BodyFraming
        switch transferEncoding {
        case .absent:
            framing = contentLength.map { .contentLength($0) } ?? .none
        case .malformed(let reason):
            return .invalid(.badRequest(reason))
        case .chunked, .unsupported:
            // RFC 9112 §6.1: Transfer-Encoding in 1.0 is faulty framing; with
            // Content-Length too it is the classic smuggling ambiguity (§6.3).
            if version == .http10 { return .invalid(.badRequest("transfer-encoding in http/1.0 request")) }
            if contentLength != nil || !fields.values(of: .contentLength).isEmpty {
                return .invalid(.badRequest("both content-length and transfer-encoding"))
            }
            if case .unsupported(let reason) = transferEncoding { return .invalid(HTTPError(status: 501, reason: reason)) }
            framing = .chunked
        }
        let expectsContinue = fields.lines.indices.contains { index in
            fields.hasName(at: index, "expect")
                && fields.withValue(at: index) { HTTPSyntax.equalsIgnoringASCIICase(bytes: $0, lowercase: "100-continue") }
        }
        var head = HTTPRequestHead(method: method, target: target, version: version, fieldSection: fields,
                                   bodyFraming: framing,
                                   wantsKeepAlive: FramingFields.wantsKeepAlive(version: version, fields: fields),
                                   expectsContinue: expectsContinue)
        // RFC 9110 §7.6.1: `Connection: expect` makes the expectation hop-by-hop:
        // it is addressed to pinproxy, and is not forwarded.
        head.continueIsForProxy = expectsContinue && HopByHopFields(fields).nominates("expect", in: fields)
        return .complete(head, consumed: consumed)
    }
}

/// Parses an upstream response head from the bytes received so far
/// (RFC 9112 §4 status line, §5 fields, §6.3 framing).
///
/// Same strictness as requests; every failure is a 502 so the runtime can
/// answer `Proxy-Status: pinproxy; error=http_protocol_error` and discard the
/// upstream connection. Ambiguities the RFC would tolerate in a response
/// (a transfer coding other than chunked, read until close) are refused too.
public enum ResponseHeadParser {
    public static func parse(_ bytes: UnsafeRawBufferPointer, requestMethod: String,
                             limits: HeadLimits) -> HeadParseResult<HTTPResponseHead> {
        var buffers = HeadBuffers()
        return parse(bytes, requestMethod: requestMethod, limits: limits, buffers: &buffers)
    }

    /// The same, its field lines and their copy made in arrays from `buffers`
    /// (given back when the head is not complete).
    public static func parse(_ bytes: UnsafeRawBufferPointer, requestMethod: String, limits: HeadLimits,
                             buffers: inout HeadBuffers) -> HeadParseResult<HTTPResponseHead> {
        let limit = min(bytes.count, limits.maxHeaderBytes)
        let overLimit = bytes.count >= limits.maxHeaderBytes
        func invalid(_ reason: String) -> HeadParseResult<HTTPResponseHead> {
            .invalid(HTTPError(status: 502, reason: reason))
        }
        func incomplete() -> HeadParseResult<HTTPResponseHead> {
            overLimit ? invalid("response header section too large") : .incomplete
        }

        var index = 0
        let version: HTTPVersion
        switch StartLineSyntax.version(bytes, at: index, limit: limit) {
        case .needMore: return incomplete()
        case .invalid(let reason): return invalid(reason)
        case .parsed(let major, let minor, let end):
            guard let known = HTTPVersion(major: major, minor: minor) else { return invalid("unsupported http version") }
            version = known
            index = end
        }
        guard index < limit else { return incomplete() }
        guard bytes[index] == HTTPSyntax.space else { return invalid("invalid status line") }
        index += 1

        // status-code = 3DIGIT
        var status = 0
        for _ in 0..<3 {
            guard index < limit else { return incomplete() }
            guard HTTPSyntax.isDigit(bytes[index]) else { return invalid("invalid status code") }
            status = status * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        guard (100...599).contains(status) else { return invalid("invalid status code") }
        // We never send Upgrade, so a 101 can only be a confused or hostile upstream.
        guard status != 101 else { return invalid("unexpected 101 switching protocols") }

        // [SP reason-phrase] CRLF: the space is tolerated when missing, the
        // phrase is HTAB / SP / VCHAR / obs-text (RFC 9112 §4).
        guard index < limit else { return incomplete() }
        var reasonRange = index..<index
        if bytes[index] == HTTPSyntax.space {
            index += 1
            let reasonStart = index
            while true {
                guard index < limit else { return incomplete() }
                let byte = bytes[index]
                if byte == HTTPSyntax.cr || byte == HTTPSyntax.lf { break }
                guard HTTPSyntax.isFieldValueByte(byte) else { return invalid("invalid reason phrase") }
                index += 1
            }
            reasonRange = reasonStart..<index
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
            return assemble(version: version, status: status, reason: reasonPhrase(bytes, reasonRange),
                            fields: fields, requestMethod: requestMethod, consumed: end)
        }
    }

    /// The reason phrase as a String: the phrase nearly every response
    /// carries is the literal, not decoded from the bytes for each response.
    private static func reasonPhrase(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        if range.count == 2 && bytes[range.lowerBound] == UInt8(ascii: "O") && bytes[range.lowerBound + 1] == UInt8(ascii: "K") {
            return "OK"
        }
        return HTTPSyntax.string(bytes, range)
    }

    private static func assemble(version: HTTPVersion, status: Int, reason: String, fields: FieldSection,
                                 requestMethod: String, consumed: Int) -> HeadParseResult<HTTPResponseHead> {
        func invalid(_ reason: String) -> HeadParseResult<HTTPResponseHead> {
            .invalid(HTTPError(status: 502, reason: reason))
        }
        let contentLength: UInt64?
        switch FramingFields.contentLength(in: fields) {
        case .failure(let error): return invalid(error.reason)
        case .success(let length): contentLength = length
        }
        let isChunked: Bool
        switch FramingFields.transferEncoding(in: fields) {
        case .absent: isChunked = false
        case .chunked: isChunked = true
        case .malformed(let reason), .unsupported(let reason): return invalid(reason)
        }
        if isChunked {
            if contentLength != nil { return invalid("both content-length and transfer-encoding") }
            // RFC 9112 §6.1: Transfer-Encoding in a 1.0 message is faulty framing.
            if version == .http10 { return invalid("transfer-encoding in http/1.0 response") }
        }

        // RFC 9112 §6.3, in its order: HEAD, 1xx, 204 and 304 have no body
        // whatever their fields say; then chunked, then Content-Length, else close.
        let framing: BodyFraming
        if requestMethod == "HEAD" || status < 200 || status == 204 || status == 304 {
            framing = .none
        } else if isChunked {
            framing = .chunked
        } else if let length = contentLength {
            framing = .contentLength(length)
        } else {
            framing = .untilClose
        }
        let keepAlive = framing != .untilClose && FramingFields.wantsKeepAlive(version: version, fields: fields)
        let declared: BodyFraming = isChunked ? .chunked : contentLength.map { .contentLength($0) } ?? .none
        let head = HTTPResponseHead(version: version, status: status, reason: reason, fieldSection: fields,
                                    bodyFraming: framing, declaredFraming: declared, wantsKeepAlive: keepAlive,
                                    isInformational: status < 200)
        return .complete(head, consumed: consumed)
    }
}

/// Reads the fields that decide message framing and connection persistence:
/// `Content-Length`, `Transfer-Encoding` and `Connection` (RFC 9112 §6, §9.3).
///
/// These are the request-smuggling fields, so every ambiguity is refused rather
/// than resolved: the caller maps a refusal to 400/501 (requests) or 502
/// (responses).
enum FramingFields {
    /// What the `Transfer-Encoding` fields of a message say.
    enum TransferEncoding: Equatable {
        case absent
        /// Exactly one field whose only coding is `chunked`.
        case chunked
        /// Well-formed codings ending in `chunked` with another coding before
        /// it, which pinproxy does not relay (RFC 9112 §6.1: 501 for a request).
        case unsupported(String)
        /// Syntax or duplication problems, or `chunked` missing or not the
        /// final coding (RFC 9112 §6.3: the length cannot be determined, 400):
        /// never guessed at.
        case malformed(String)
    }

    static func transferEncoding(in section: FieldSection) -> TransferEncoding {
        guard let (index, repeated) = section.firstIndex(of: .transferEncoding) else { return .absent }
        if repeated { return .malformed("duplicate transfer-encoding fields") }
        let value = section.value(at: index)
        let codings = HTTPSyntax.listElements(value)
        var chunkedCount = 0
        for coding in codings {
            // A tab or ';' inside an element makes it a non-token: "chunked;x" is never chunked.
            guard HTTPSyntax.isToken(coding) else { return .malformed("invalid transfer-encoding") }
            if HTTPSyntax.equalsIgnoringASCIICase(coding, "chunked") { chunkedCount += 1 }
        }
        if chunkedCount > 1 { return .malformed("chunked applied more than once") }
        if codings.count == 1 && chunkedCount == 1 { return .chunked }
        // RFC 9112 §6.3: a request whose final coding is not chunked cannot be
        // framed (the server MUST answer 400); chunked before another coding likewise.
        if chunkedCount == 0 || !HTTPSyntax.equalsIgnoringASCIICase(codings[codings.count - 1], "chunked") {
            return .malformed("chunked is not the final transfer coding")
        }
        return .unsupported("unsupported transfer coding before chunked")
    }

    /// The single length that every `Content-Length` field agrees on, nil when
    /// there is none. RFC 9110 §8.6: identical duplicates ("5, 5" or two fields
    /// of 5) are one length; differing values, signs, spaces, empty elements
    /// and overflow are refused (`.failure` carries the reason).
    static func contentLength(in section: FieldSection) -> Result<UInt64?, HTTPError> {
        var length: UInt64?
        var failure: HTTPError?
        for index in section.lines.indices where section.lines[index].known == .contentLength {
            section.withValue(at: index) { value in
                HTTPSyntax.forEachListElement(in: value) { element in
                    guard let parsed = HTTPSyntax.decimal(UnsafeRawBufferPointer(rebasing: value[element])) else {
                        failure = .badRequest("invalid content-length")
                        return false
                    }
                    if let existing = length, existing != parsed {
                        failure = .badRequest("differing content-length values")
                        return false
                    }
                    length = parsed
                    return true
                }
            }
            if let failure { return .failure(failure) }
        }
        return .success(length)
    }

    /// The connection options of every `Connection` field (RFC 9110 §7.6.1),
    /// as ranges of the section's storage (compare them with
    /// `FieldSection.hasName(at:equalToStorage:)`), without the options that
    /// name a field removed in any case (`isAlwaysHopByHop`: keep-alive,
    /// upgrade, te …), so the usual `Connection: keep-alive` makes no array.
    static func connectionOptions(in section: FieldSection) -> [Range<Int>] {
        var options: [Range<Int>] = []
        for index in section.lines.indices where section.lines[index].known == .connection {
            let base = section.lines[index].value.lowerBound
            section.withValue(at: index) { value in
                HTTPSyntax.forEachListElement(in: value) { option in
                    let name = UnsafeRawBufferPointer(rebasing: value[option])
                    if !option.isEmpty && !KnownFieldName(bytes: name).isAlwaysHopByHop {
                        options.append((base + option.lowerBound)..<(base + option.upperBound))
                    }
                    return true
                }
            }
        }
        return options
    }

    /// RFC 9112 §9.3: 1.1 persists unless `close`; 1.0 only with `keep-alive`.
    /// Runs for every request and response: it reads the options in place.
    static func wantsKeepAlive(version: HTTPVersion, fields section: FieldSection) -> Bool {
        var close = false
        var keepAlive = false
        for index in section.lines.indices where section.lines[index].known == .connection {
            section.withValue(at: index) { value in
                HTTPSyntax.forEachListElement(in: value) { option in
                    let bytes = UnsafeRawBufferPointer(rebasing: value[option])
                    if HTTPSyntax.equalsIgnoringASCIICase(bytes: bytes, lowercase: "close") { close = true }
                    if HTTPSyntax.equalsIgnoringASCIICase(bytes: bytes, lowercase: "keep-alive") { keepAlive = true }
                    return !close
                }
            }
        }
        if close { return false }
        return version == .http11 || keepAlive
    }
}

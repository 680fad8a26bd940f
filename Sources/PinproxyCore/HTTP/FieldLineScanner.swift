/// Scans a field section (header or trailer lines up to the empty line) byte by
/// byte, recording where names and values are without creating Strings.
///
/// Strict per RFC 9112 §5 and §2.2: a line must end in CRLF (bare CR or bare LF
/// is refused at once, without waiting for more bytes), obs-fold is refused,
/// names are tokens with no whitespace before the colon, and values contain no
/// control characters other than HTAB (obs-text is allowed).
enum FieldLineScanner {
    /// Byte offsets of one field line; the value range is already OWS-trimmed.
    struct Span: Equatable {
        var name: Range<Int>
        var value: Range<Int>
    }

    enum Outcome: Equatable {
        /// The empty line was found; `end` is the offset just after its LF.
        case complete(end: Int)
        /// The bytes up to `limit` are a valid prefix of a field section.
        case needMore
        case invalid(String)
    }

    /// Capacity reserved for the spans of a head: one allocation instead of
    /// the array doubling its way up for an ordinary head.
    static let typicalFieldCount = 24

    /// Scans `bytes[start..<limit]`, appending one span per field line.
    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int,
                     into spans: inout [Span]) -> Outcome {
        var index = start
        while true {
            guard index < limit else { return .needMore }
            let first = bytes[index]
            if first == HTTPSyntax.cr {
                guard index + 1 < limit else { return .needMore }
                return bytes[index + 1] == HTTPSyntax.lf ? .complete(end: index + 2) : .invalid("bare cr in field section")
            }
            if first == HTTPSyntax.lf { return .invalid("bare lf in field section") }
            // RFC 9112 §5.2: obs-fold is refused outside message/http.
            if HTTPSyntax.isWhitespace(first) { return .invalid("obs-fold or whitespace at line start") }

            let nameStart = index
            while true {
                guard index < limit else { return .needMore }
                let byte = bytes[index]
                if byte == HTTPSyntax.colon { break }
                if HTTPSyntax.isTokenChar(byte) { index += 1; continue }
                // RFC 9112 §5.1: no whitespace between field name and colon.
                return .invalid(HTTPSyntax.isWhitespace(byte) ? "whitespace before colon" : "invalid field name")
            }
            let nameEnd = index
            guard nameEnd > nameStart else { return .invalid("empty field name") }
            index += 1

            var valueStart = index
            var valueEnd = index
            while true {
                guard index < limit else { return .needMore }
                let byte = bytes[index]
                if byte == HTTPSyntax.cr {
                    guard index + 1 < limit else { return .needMore }
                    guard bytes[index + 1] == HTTPSyntax.lf else { return .invalid("bare cr in field value") }
                    valueEnd = index
                    index += 2
                    break
                }
                if byte == HTTPSyntax.lf { return .invalid("bare lf in field section") }
                guard HTTPSyntax.isFieldValueByte(byte) else { return .invalid("invalid field value") }
                index += 1
            }
            while valueStart < valueEnd, HTTPSyntax.isWhitespace(bytes[valueStart]) { valueStart += 1 }
            while valueEnd > valueStart, HTTPSyntax.isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }
            spans.append(Span(name: nameStart..<nameEnd, value: valueStart..<valueEnd))
        }
    }
}

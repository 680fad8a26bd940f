/// Writes the framing fields of a relayed head in one unambiguous spelling.
///
/// The parsers have already proved that all `Content-Length` values agree and
/// that `Transfer-Encoding` is exactly `chunked`; relaying the received
/// spelling ("5, 5", two fields, "Chunked ") would hand the next hop the very
/// ambiguity we resolved, so one normalised line is written at the position of
/// the first framing field and the others are dropped.
struct FramingFieldWriter {
    private var wroteContentLength = false
    private var wroteTransferEncoding = false

    /// Handles `field` when it is a framing field (writing it or dropping a
    /// duplicate) and returns true; false for every other field.
    mutating func write(_ field: HTTPField, to writer: inout HeadWriter, keepChunked: Bool = true) -> Bool {
        if field.known == .contentLength {
            if !wroteContentLength {
                HTTPSyntax.forEachListElement(field.value) { first in
                    writer.field(field.name, first)
                    return false
                }
                wroteContentLength = true
            }
            return true
        }
        if field.known == .transferEncoding {
            if !wroteTransferEncoding && keepChunked {
                writer.field(field.name, "chunked")
                wroteTransferEncoding = true
            }
            return true
        }
        return false
    }
}

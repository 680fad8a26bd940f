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

    /// Handles the field at `index` when it is a framing field (writing it or dropping a
    /// duplicate) and returns true; false for every other field.
    mutating func write(_ section: FieldSection, at index: Int, to writer: inout HeadWriter,
                        keepChunked: Bool = true) -> Bool {
        let known = section.lines[index].known
        if known == .contentLength {
            if !wroteContentLength {
                let name = section.name(at: index)
                HTTPSyntax.forEachListElement(section.value(at: index)) { first in
                    writer.field(name, first)
                    return false
                }
                wroteContentLength = true
            }
            return true
        }
        if known == .transferEncoding {
            if !wroteTransferEncoding && keepChunked {
                writer.field(section.name(at: index), "chunked")
                wroteTransferEncoding = true
            }
            return true
        }
        return false
    }
}

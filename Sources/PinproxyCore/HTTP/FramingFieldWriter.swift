/// Writes the framing field of a relayed head from the framing pinproxy
/// parsed, never from the received field lines (SPEC §3).
///
/// The parsers have proved that all `Content-Length` values agree and that
/// `Transfer-Encoding` ends in `chunked`; relaying the received spelling
/// ("5, 5", two fields, "010", "Chunked ") would hand the next hop the very
/// ambiguity we resolved, and copying the fields at all would let a
/// `Connection: content-length` option remove them while the body is still
/// relayed. So the writers drop every received framing field and write one
/// canonical line here: `Content-Length` in plain decimal, or
/// `Transfer-Encoding: chunked`.
enum FramingFieldWriter {
    static func write(_ framing: BodyFraming, to writer: inout HeadWriter) {
        switch framing {
        case let .contentLength(length): writer.field("Content-Length", decimal: length)
        case .chunked: writer.field("Transfer-Encoding", "chunked")
        case .none, .untilClose: break
        }
    }
}

/// Serialises the response head sent to the client (SPEC §3).
///
/// The status line is in the client's version ("HTTP/1.0 …" for a 1.0 client),
/// hop-by-hop fields are removed, the framing field is written from the parsed
/// framing (`FramingFieldWriter`), `Via: 1.1 pinproxy` appended, and
/// `Connection: close` written when the connection will close, or
/// `Connection: keep-alive` when a 1.0 client keeps it.
///
/// The framing field is the one the upstream declared (`declaredFraming`), so
/// a HEAD or 304 response keeps the length the GET would have had (RFC 9110
/// §8.6); 1xx and 204 responses get none (RFC 9110 §8.6, RFC 9112 §6.1:
/// a server must not send one there, and a lenient client would read a body).
///
/// Two cases override `keepAlive`: a body delimited by close, and a chunked
/// body for an HTTP/1.0 client, which cannot parse chunked framing (RFC 9112
/// §6.1): its `Transfer-Encoding` is dropped and the body ends at close, so the
/// runtime must then pass chunk data through without the framer's `emit`
/// bytes. Interim (1xx) heads never carry a Connection field.
public enum ClientResponseWriter {
    public static func serialise(_ head: HTTPResponseHead, clientVersion: HTTPVersion, keepAlive: Bool) -> [UInt8] {
        serialise(head, clientVersion: clientVersion, keepAlive: keepAlive, into: [])
    }

    /// The same, written into `buffer` (empty; its capacity is kept).
    static func serialise(_ head: HTTPResponseHead, clientVersion: HTTPVersion, keepAlive: Bool,
                          into buffer: consuming [UInt8]) -> [UInt8] {
        var writer = HeadWriter(into: consume buffer)
        let reason = head.reason.isEmpty ? HTTPStatusReason.phrase(for: head.status) : head.reason
        writer.statusLine(clientVersion.text, head.status, reason)
        let dechunked = clientVersion == .http10 && head.bodyFraming == .chunked
        let section = head.fieldSection
        let hopByHop = HopByHopFields(section)
        section.write(to: &writer) { index in
            // A request with a framing alias is refused (400); a response's is dropped, as its framing is rewritten.
            !section.lines[index].known.isFramingOrAlias && !hopByHop.contains(section, at: index)
        }
        if head.status >= 200 && head.status != 204
            && !(clientVersion == .http10 && head.declaredFraming == .chunked) {
            FramingFieldWriter.write(head.declaredFraming, to: &writer)
        }
        writer.viaPinproxy()
        if !head.isInformational {
            let persistent = keepAlive && !dechunked && head.bodyFraming != .untilClose
            if !persistent {
                writer.field("Connection", "close")
            } else if clientVersion == .http10 {
                writer.field("Connection", "keep-alive")
            }
        }
        return writer.finish()
    }
}

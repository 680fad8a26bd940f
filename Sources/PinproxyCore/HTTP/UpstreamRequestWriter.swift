/// Serialises the head sent upstream (SPEC §3).
///
/// "METHOD origin-form HTTP/1.1", `Host: <upstream host[:port if != 443]>`
/// replacing any Host, hop-by-hop fields removed (Connection and every field it
/// names, Proxy-Connection, Keep-Alive, TE, Trailer, Upgrade,
/// Proxy-Authorization), the framing field written from the parsed framing
/// (`FramingFieldWriter`), and `Via: 1.1 pinproxy` appended after any existing
/// Via list (RFC 9110 §7.6.3); a TRACE or OPTIONS carries its `Max-Forwards`
/// less one (RFC 9110 §7.6.2). Host and the framing fields are generated, never
/// copied, so a `Connection` option naming them removes only the received copy.
/// Upstream connections are always persistent HTTP/1.1, so no Connection field.
public enum UpstreamRequestWriter {
    public static func serialise(_ head: HTTPRequestHead, routed: RoutedRequest) -> [UInt8] {
        serialise(head, routed: routed, into: [])
    }

    /// The same, written into `buffer` (empty; its capacity is kept).
    static func serialise(_ head: HTTPRequestHead, routed: RoutedRequest, into buffer: consuming [UInt8]) -> [UInt8] {
        var writer = HeadWriter(into: consume buffer)
        writer.startLine(head.method, routed.originFormTarget, "HTTP/1.1")
        writer.hostField(routed.upstream)
        let section = head.fieldSection
        let hopByHop = HopByHopFields(section)
        let maxForwards = routed.maxForwards
        section.write(to: &writer) { index in
            let known = section.lines[index].known
            return known != .host && !known.isFraming && !hopByHop.contains(section, at: index)
                && (maxForwards == nil || !MaxForwards.isField(section, at: index))
        }
        if let maxForwards { writer.field("Max-Forwards", decimal: UInt64(maxForwards)) }
        FramingFieldWriter.write(head.bodyFraming, to: &writer)
        writer.viaPinproxy()
        return writer.finish()
    }
}

/// Serialises the head sent upstream (SPEC §3).
///
/// "METHOD origin-form HTTP/1.1", `Host: <upstream host[:port if != 443]>`
/// replacing any Host, hop-by-hop fields removed (Connection and every field it
/// names, Proxy-Connection, Keep-Alive, TE, Trailer, Upgrade,
/// Proxy-Authorization), framing fields normalised, Expect kept, and
/// `Via: 1.1 pinproxy` appended after any existing Via list (RFC 9110 §7.6.3).
/// Upstream connections are always persistent HTTP/1.1, so no Connection field.
public enum UpstreamRequestWriter {
    public static func serialise(_ head: HTTPRequestHead, routed: RoutedRequest) -> [UInt8] {
        var writer = HeadWriter()
        writer.startLine(head.method, routed.originFormTarget, "HTTP/1.1")
        writer.field("Host", hostFieldValue(routed.upstream))
        let section = head.fieldSection
        let hopByHop = HopByHopFields(section)
        var framing = FramingFieldWriter()
        for index in section.lines.indices
        where section.lines[index].known != .host && !hopByHop.contains(section, at: index) {
            if framing.write(section, at: index, to: &writer) { continue }
            section.write(at: index, to: &writer)
        }
        writer.field("Via", "1.1 pinproxy")
        return writer.finish()
    }

    /// RFC 9110 §7.2: the authority of the target URI, the port omitted when it
    /// is the https default.
    static func hostFieldValue(_ upstream: Endpoint) -> String {
        let host = upstream.host.isIPv6 ? "[\(upstream.host.value)]" : upstream.host.value
        return upstream.port == 443 ? host : "\(host):\(upstream.port)"
    }
}

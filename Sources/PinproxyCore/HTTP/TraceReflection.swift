/// What pinproxy answers a TRACE with when it is the final recipient
/// (RFC 9110 §9.3.8): the request as received, start line and field lines, as
/// `message/http` content, so the client sees what reached this hop. Fields
/// likely to carry credentials are left out, as the RFC asks of the final
/// recipient: a page that can send a TRACE must not read back what the user
/// agent attached to it (cross-site tracing).
enum TraceReflection {
    /// The received fields never reflected.
    static let withheld: [String] = ["authorization", "proxy-authorization", "cookie"]

    static func content(of head: HTTPRequestHead) -> [UInt8] {
        var writer = HeadWriter()
        writer.startLine(head.method, head.target, head.version.text)
        let section = head.fieldSection
        section.write(to: &writer) { index in
            !withheld.contains { section.hasName(at: index, $0) }
        }
        return writer.finish()
    }
}

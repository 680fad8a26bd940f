import Foundation
import Testing

/// SPEC §3.1: "The client's SNI must name the CONNECT host; otherwise the
/// tunnel is closed and logged." A ClientHello for another name (or for no
/// name) gets the fatal `unrecognized_name` alert (RFC 6066 §3) before any
/// certificate is presented, the upstream connection verified for the
/// CONNECT is closed without a byte of a request, and the daemon goes on
/// serving. Names compare as DNS names do: without regard to case.
@Suite("CONNECT interception: the client's SNI must name the CONNECT host", .serialized)
struct InterceptedServerNameTests {
    let bed: ConnectBed

    init() throws {
        bed = try ConnectBed()
    }

    @Test("an SNI for another host gets unrecognized_name, is logged with both names, and nothing reaches the origin")
    func otherName() throws {
        let outcome = try bed.client(["--sni", "other.example.com", "--request", "GET /never HTTP/1.1\nHost: api.example.com\n\n"])
        #expect(outcome.connectStatus == 200, "\(outcome)")
        #expect(outcome.handshake == "failed", "\(outcome)")
        #expect(outcome.tlsError?.contains("UNRECOGNIZED_NAME") == true, "\(outcome)")
        #expect(outcome.responses.isEmpty)
        #expect(outcome.ending == "closed")
        let log = bed.waitForLog(containing: "client TLS for api.example.com failed")
        #expect(log.contains(#"clientHandshake: client TLS for api.example.com failed: the client's SNI "other.example.com" is not the CONNECT host api.example.com: unrecognized_name alert"#), "\(log)")
        try expectNothingReachedTheOrigin()
        try bed.expectInterceptedClientServed()
    }

    /// The contract has no exception for a ClientHello without server_name:
    /// "must name the CONNECT host" is not met by naming nothing, and the
    /// leaf pinproxy would present is for that host only.
    @Test("a ClientHello without SNI is refused the same way, and logged as missing")
    func noName() throws {
        let outcome = try bed.client(["--no-sni"])
        #expect(outcome.connectStatus == 200, "\(outcome)")
        #expect(outcome.handshake == "failed", "\(outcome)")
        #expect(outcome.tlsError?.contains("UNRECOGNIZED_NAME") == true, "\(outcome)")
        let log = bed.waitForLog(containing: "client TLS for api.example.com failed")
        #expect(log.contains("client TLS for api.example.com failed: the client sent no SNI, expected api.example.com (the CONNECT host): unrecognized_name alert"), "\(log)")
        try expectNothingReachedTheOrigin()
        try bed.expectInterceptedClientServed()
    }

    @Test("an SNI that differs from the CONNECT host only in case is the same name (RFC 4343): the handshake and the request succeed")
    func caseInsensitive() throws {
        let outcome = try bed.client(["--sni", "API.Example.COM", "--request", "GET /mixed-case HTTP/1.1\nHost: api.example.com\n\n"])
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.peerSan == ["api.example.com"])
        #expect(outcome.responses.map(\.status) == [200])
        #expect(bed.originRequests().map(\.target) == ["/mixed-case"])
    }

    /// The origin had its TLS connection (verified before the 200) and not one
    /// request head; the daemon holds no socket for the refused client.
    private func expectNothingReachedTheOrigin(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let closed = eventually({ bed.origin.events().filter { $0.event == "closed" } }, until: { !$0.isEmpty })
        #expect(closed.count == 1, "the origin's connection made before the 200 is closed", sourceLocation: sourceLocation)
        #expect(bed.originHeads().isEmpty, "\(bed.originHeads().map(\.target))", sourceLocation: sourceLocation)
        let census = bed.census()
        #expect(census.total == 0, "\(census)", sourceLocation: sourceLocation)
    }
}

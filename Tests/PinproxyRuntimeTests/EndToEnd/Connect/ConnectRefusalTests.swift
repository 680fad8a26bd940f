import Foundation
import Testing

/// CONNECTs refused before any upstream connection is made, and what the
/// bytes behind a refused head become: nothing. SPEC §3.1: a port not in
/// `connect_ports` gets `403` `http_request_denied`. RFC 9110 §9.3.6: "A
/// CONNECT request message does not have content"; pinproxy refuses one
/// that declares some (`400`), since its bytes could not be told from the
/// tunnel's, and closes the connection, so a smuggling-shaped "body" is
/// never read as a request. `Content-Length: 0` declares none: it tunnels.
///
/// Nothing reaching an origin is proved by order: the well-behaved client
/// that follows must be the origin's first connection.
@Suite("CONNECT refused: ports outside connect_ports, and CONNECTs with content", .serialized)
struct ConnectRefusalTests {
    let bed: ConnectBed

    /// A listed IP literal: a rule, but never a name the CA may issue for.
    static let listedAddress = "127.0.0.2"

    init() throws {
        bed = try ConnectBed(extraHosts: #""\#(Self.listedAddress)": { "policy": "default" },"#)
    }

    static let smuggled = "GET http://api.example.com/smuggled HTTP/1.1\r\nHost: api.example.com\r\n\r\n"

    @Test("a port outside connect_ports gets 403 http_request_denied, logged, with nothing upstream; bytes behind the head are never a request",
          arguments: ["api.example.com:8443", "tunnel.example.net:22"])
    func portDenied(authority: String) throws {
        let (client, answer, pending) = try bed.rawConnect(authority, early: Array(Self.smuggled.utf8))
        let response = try #require(answer)
        #expect(response.status == 403)
        #expect(response.values("proxy-status") == [#"pinproxy; error=http_request_denied; details="port not allowed""#])
        #expect(response.bodyText.contains("connect_ports"))
        #expect(pending.isEmpty, "one answer only")
        #expect(client.read(timeout: 5).ending == .closed)
        // The answer ended with a FIN; the daemon closes once the client does (a staged close).
        client.close()
        let log = bed.waitForLog(containing: "refused: port not in connect_ports")
        #expect(log.contains("requestHead: CONNECT \(authority) refused: port not in connect_ports (403)"), "\(log)")
        try expectNothingReachedTheOrigins()
    }

    struct Declared: CustomTestStringConvertible, Sendable {
        var name: String
        var fields: String
        var body: String
        var testDescription: String { name }
    }

    static let declared = [
        Declared(name: "Content-Length with a request as its content",
                 fields: "Content-Length: \(smuggled.utf8.count)\r\n", body: smuggled),
        Declared(name: "Transfer-Encoding: chunked with a request in its chunk",
                 fields: "Transfer-Encoding: chunked\r\n",
                 body: String(smuggled.utf8.count, radix: 16) + "\r\n" + smuggled + "\r\n0\r\n\r\n"),
        Declared(name: "both Content-Length and Transfer-Encoding",
                 fields: "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n" + smuggled),
    ]

    @Test("a CONNECT that declares content gets 400 and the close, whatever its host; its content is never read as a request",
          arguments: declared, [ConnectBed.interceptedAuthority, ConnectBed.tunnelAuthority])
    func declaresContent(_ declared: Declared, authority: String) throws {
        let (client, answer, pending) = try bed.rawConnect(authority, fields: declared.fields, early: Array(declared.body.utf8))
        let response = try #require(answer)
        #expect(response.status == 400)
        #expect(pending.isEmpty, "one answer only: \(String(decoding: pending, as: UTF8.self))")
        #expect(client.read(timeout: 5).ending == .closed)
        // The answer ended with a FIN; the daemon closes once the client does (a staged close).
        client.close()
        let log = bed.waitForLog(containing: "request rejected (400)")
        #expect(log.contains("requestHead: request rejected (400)"), "\(log)")
        try expectNothingReachedTheOrigins()
    }

    @Test("Content-Length: 0 declares no content: the CONNECT tunnels")
    func emptyContentLength() throws {
        let ping = Array("ping".utf8)
        let (client, answer, pending) = try bed.rawConnect(ConnectBed.tunnelAuthority, fields: "Content-Length: 0\r\n", early: ping)
        #expect(answer?.status == 200)
        var echoed = pending
        while echoed.count < ping.count {
            let (data, ending) = client.readSome(timeout: 5)
            if data.isEmpty || ending != nil { break }
            echoed += data
        }
        #expect(echoed == ping)
    }

    /// SPEC §3.1: the CA excludes every IP range, so no `ca init` will ever
    /// cover an IP literal (`pinproxy ca show` lists it as "never
    /// intercepted"); the refusal must say that, not send the operator to
    /// re-issue the CA.
    @Test("a listed IP literal is refused with 403, saying IP addresses are never intercepted rather than naming ca init")
    func listedAddressNeverIntercepted() throws {
        let (client, answer, _) = try bed.rawConnect("\(Self.listedAddress):443")
        let response = try #require(answer)
        #expect(response.status == 403)
        #expect(response.values("proxy-status") == [#"pinproxy; error=http_request_denied; details="not covered by the interception CA""#])
        #expect(response.bodyText.contains("IP address"), "\(response.bodyText)")
        #expect(!response.bodyText.contains("ca init"), "\(response.bodyText)")
        #expect(client.read(timeout: 5).ending == .closed)
        // The answer ended with a FIN; the daemon closes once the client does (a staged close).
        client.close()
        let log = bed.waitForLog(containing: "CONNECT \(Self.listedAddress)")
        #expect(log.contains("CONNECT \(Self.listedAddress) refused: an IP address is never intercepted"), "\(log)")
        #expect(!log.contains("run pinproxy ca init"), "\(log)")
        try expectNothingReachedTheOrigins()
    }

    /// The next well-behaved clients are served, and each is its origin's
    /// first connection: the refused CONNECT opened none.
    private func expectNothingReachedTheOrigins(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try bed.expectInterceptedClientServed(sourceLocation: sourceLocation)
        let requests = bed.originRequests()
        #expect(requests.count == 1 && requests.allSatisfy { $0.conn == 1 && ($0.target ?? "").hasPrefix("/next-") },
                "\(requests.map { "\($0.conn) \($0.target ?? "")" })", sourceLocation: sourceLocation)
        try bed.expectTunnelClientServed(sourceLocation: sourceLocation)
        let accepted = bed.tunnelOrigin.events().filter { $0.event == "accepted" }
        #expect(accepted.map(\.conn) == [1], sourceLocation: sourceLocation)
        #expect(String(decoding: bed.tunnelOrigin.rawBytes(of: 1), as: UTF8.self).hasPrefix("ping "), sourceLocation: sourceLocation)
        #expect(bed.census(pooled: 1).clientSessions == 0, sourceLocation: sourceLocation)
    }
}

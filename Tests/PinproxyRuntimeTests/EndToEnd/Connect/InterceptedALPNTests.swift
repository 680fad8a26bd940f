import Foundation
import Testing

/// SPEC §3.1: the client's TLS is terminated with "ALPN `http/1.1` only".
/// A client offering h2 first still gets http/1.1; one offering only h2 gets
/// no ALPN at all rather than a fatal alert (`TLSServerContext.alpnTrampoline`
/// says why), and whatever it then sends meets the HTTP/1.1 parser.
@Suite("CONNECT interception: ALPN is http/1.1 only", .serialized)
struct InterceptedALPNTests {
    let bed: ConnectBed

    init() throws {
        bed = try ConnectBed()
    }

    static let request = ["--request", "GET /alpn HTTP/1.1\nHost: api.example.com\n\n"]

    @Test("a client offering h2 before http/1.1 gets http/1.1")
    func h2First() throws {
        let outcome = try bed.client(["--alpn", "h2", "--alpn", "http/1.1"] + Self.request)
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.alpn == "http/1.1")
        #expect(outcome.responses.map(\.status) == [200])
    }

    @Test("a client offering only h2 gets no protocol, not an alert; an HTTP/1.1 request is still served")
    func h2Only() throws {
        let outcome = try bed.client(["--alpn", "h2"] + Self.request)
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.alpn == nil)
        #expect(outcome.responses.map(\.status) == [200])
    }

    @Test("a client that offers no ALPN at all is served over HTTP/1.1")
    func noALPN() throws {
        let outcome = try bed.client(["--alpn", ""] + Self.request)
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.alpn == nil)
        #expect(outcome.responses.map(\.status) == [200])
    }
}

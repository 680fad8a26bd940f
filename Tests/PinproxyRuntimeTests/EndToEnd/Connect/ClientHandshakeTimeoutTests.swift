import Foundation
import Testing

/// A client that was answered `200` for an intercepted host and then never
/// finishes its TLS handshake — it sends nothing, or half a ClientHello,
/// before or after the `200` — is closed once `timeouts.handshake` (1 s
/// here) has passed, and that is logged. The upstream connection verified
/// for it is closed too, without a byte of a request, and the daemon goes
/// on serving.
@Suite("CONNECT interception: a client that never finishes its handshake is closed after timeouts.handshake", .serialized)
struct ClientHandshakeTimeoutTests {
    let bed: ConnectBed

    init() throws {
        bed = try ConnectBed()
    }

    struct Stall: CustomTestStringConvertible, Sendable {
        var name: String
        var arguments: [String]
        var testDescription: String { name }
    }

    static let stalls = [
        Stall(name: "nothing after the 200", arguments: ["--silent"]),
        Stall(name: "the first 5 bytes (a record header) after the 200", arguments: ["--hello-bytes", "5"]),
        Stall(name: "half a ClientHello after the 200", arguments: ["--hello-bytes", "250"]),
        Stall(name: "half a ClientHello with the CONNECT head", arguments: ["--pipeline", "--hello-bytes", "250"]),
        Stall(name: "half a ClientHello in 1-byte records", arguments: ["--record-size", "1", "--hello-bytes", "700"]),
    ]

    @Test("closed after about timeouts.handshake, logged, no request upstream, no socket left, the next client served",
          arguments: stalls)
    func stalled(_ stall: Stall) throws {
        let outcome = try bed.client(stall.arguments)
        #expect(outcome.connectStatus == 200, "\(outcome)")
        #expect(outcome.ending == "closed", "\(outcome)")
        let closedAfter = try #require(outcome.closedAfter)
        // The timer starts once the 200 is written (the client's last write came
        // a few milliseconds before it): not early, and not much later.
        #expect(closedAfter >= ConnectBed.handshakeTimeout * 0.9, "closed after \(closedAfter) s")
        #expect(closedAfter < ConnectBed.handshakeTimeout + 2.5, "closed after \(closedAfter) s")
        let log = bed.waitForLog(containing: "handshake not finished within timeouts.handshake")
        #expect(log.contains("clientHandshake: client TLS for api.example.com failed: handshake not finished within timeouts.handshake"),
                "\(log)")
        #expect(bed.originHeads().isEmpty)
        let census = bed.census()
        #expect(census.total == 0, "\(census)")
        try bed.expectInterceptedClientServed()
    }

    @Test("a client that closes mid-handshake is logged as such, at once, and leaves no socket behind")
    func closesMidHandshake() throws {
        let client = try RawClient(port: bed.proxy.forwardPort)
        client.send("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n")
        var pending: [UInt8] = []
        let answer = RawHTTPResponse.read(from: client, pending: &pending, method: "CONNECT")
        #expect(answer?.status == 200)
        // A TLS record header announcing a ClientHello, then the client is gone.
        client.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        client.close()
        let log = bed.waitForLog(containing: "client TLS for api.example.com failed")
        #expect(log.contains("client TLS for api.example.com failed: client closed during the handshake"), "\(log)")
        #expect(!log.contains("timeouts.handshake"), "the close is seen at once, not at the timeout")
        #expect(bed.census().total == 0)
        #expect(bed.originHeads().isEmpty)
    }
}

import Foundation
import Testing

/// A client may send the first bytes of its tunnel right behind the CONNECT
/// head, before the `200` arrives (curl does not, some clients and proxies
/// chained behind pinproxy do). pinproxy reads them with the head and keeps
/// them: an intercepted tunnel feeds them to its TLS server first
/// (`TLSStream.Role.server(prefix:)`), even when the rest of the ClientHello
/// comes after the `200`; a blind tunnel sends them to the origin first —
/// exactly once, in order, nothing lost or doubled.
@Suite("CONNECT: bytes sent before the 200 are the tunnel's first bytes", .serialized)
struct ConnectPipeliningTests {
    static let tunnelledTLSAuthority = "files.cdn.example.com:443"
    let bed: ConnectBed
    let tunnelledTLS: TestUpstream

    init() throws {
        var upstream: TestUpstream?
        // An unlisted name the world's certificate covers (*.cdn.example.com): a
        // client's own TLS through a blind tunnel, verified against the world's root.
        // The trickled ClientHello takes about half a second, and nothing here measures a timeout.
        bed = try ConnectBed(handshakeTimeout: 20) { world in upstream = try world.startUpstream(resolving: [Self.tunnelledTLSAuthority]) }
        tunnelledTLS = try #require(upstream)
    }

    @Test("intercepted: a whole ClientHello sent with the CONNECT head completes the handshake and the tunnel serves")
    func interceptedWholeHello() throws {
        let outcome = try bed.client(["--pipeline", "--request", "GET /early HTTP/1.1\nHost: api.example.com\n\n"])
        #expect(outcome.connectStatus == 200, "\(outcome)")
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.responses.map(\.status) == [200])
        #expect(bed.originRequests().map(\.target) == ["/early"])
    }

    @Test("intercepted: a ClientHello trickled from before the 200 to after it (1-byte segments) completes the handshake")
    func interceptedHelloAcrossTheAnswer() throws {
        // About 0.5 s of trickle; the 200 comes once the origin is verified, a few milliseconds in.
        let outcome = try bed.client(["--pipeline", "--segment-size", "1", "--request", "GET /straddle HTTP/1.1\nHost: api.example.com\n\n"])
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.responses.map(\.status) == [200])
    }

    @Test("intercepted: a ClientHello in many small records sent with the head completes the handshake")
    func interceptedRecordsEarly() throws {
        let outcome = try bed.client(["--pipeline", "--record-size", "32", "--request", "GET /records HTTP/1.1\nHost: api.example.com\n\n"])
        #expect((outcome.helloRecords ?? 0) > 10)
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.responses.map(\.status) == [200])
    }

    @Test("intercepted: a plaintext request sent behind the head is no ClientHello: the handshake fails, logged, and nothing is answered or sent upstream")
    func interceptedPlaintextBehindTheHead() throws {
        let smuggled = "GET http://api.example.com/smuggled HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        let (client, answer, pending) = try bed.rawConnect(ConnectBed.interceptedAuthority, early: Array(smuggled.utf8))
        #expect(answer?.status == 200)
        let (rest, ending) = client.read(timeout: 5)
        let after = pending + rest
        #expect(ending == .closed)
        #expect(!String(decoding: after, as: UTF8.self).contains("HTTP/1."), "no HTTP answer inside the tunnel")
        #expect(after.isEmpty || after.first == 0x15, "at most a TLS alert: \(after.prefix(8))")
        let log = bed.waitForLog(containing: "client TLS for api.example.com failed")
        #expect(log.contains("clientHandshake: client TLS for api.example.com failed: "), "\(log)")
        #expect(bed.originHeads().isEmpty)
        #expect(bed.census().total == 0)
    }

    @Test("blind tunnel: bytes written with the CONNECT head reach the origin once and first, then the rest in order")
    func tunnelRawBytes() throws {
        let early = Array("early bytes \(UUID().uuidString) ".utf8) + (0..<3000).map { UInt8($0 % 251) }
        let (client, answer, pending) = try bed.rawConnect(ConnectBed.tunnelAuthority, early: early)
        #expect(answer?.status == 200)
        #expect(answer?.values("content-length").isEmpty == true, "RFC 9110 §9.3.6: no framing fields on a 2xx to CONNECT")
        let later = Array(" and later bytes".utf8)
        client.send(later)
        var echoed = pending
        while echoed.count < early.count + later.count {
            let (data, ending) = client.readSome(timeout: 5)
            if data.isEmpty || ending != nil { break }
            echoed += data
        }
        #expect(echoed == early + later)
        let received = eventually({ bed.tunnelOrigin.rawBytes(of: 1) }, until: { $0.count >= early.count + later.count })
        #expect(received == early + later, "the origin got \(received.count) bytes")
        #expect(bed.tunnelOrigin.events().filter { $0.event == "accepted" }.count == 1)
    }

    @Test("blind tunnel: 1 MiB sent with the CONNECT head, far past what pinproxy reads with a head, reaches the origin exactly once, in order")
    func tunnelLargeEarlyPayload() throws {
        let payload: [UInt8] = (0..<(1 << 20)).map { (index: Int) -> UInt8 in UInt8(truncatingIfNeeded: index * 7 + index / 251) }
        let client = try RawClient(port: bed.proxy.forwardPort)
        let head = Array("CONNECT \(ConnectBed.tunnelAuthority) HTTP/1.1\r\nHost: \(ConnectBed.tunnelAuthority)\r\n\r\n".utf8)
        // Written from another thread: the echo must be read meanwhile, or both directions fill up.
        let descriptor = client.descriptor, bytes = head + payload
        let sender = Thread {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return }
                offset += sent
            }
        }
        sender.start()
        var pending: [UInt8] = []
        let answer = RawHTTPResponse.read(from: client, pending: &pending, method: "CONNECT")
        #expect(answer?.status == 200)
        var echoed = pending
        let deadline = Date().addingTimeInterval(20)
        while echoed.count < payload.count, deadline.timeIntervalSinceNow > 0 {
            let (data, ending) = client.readSome(timeout: deadline.timeIntervalSinceNow)
            echoed += data
            if ending != nil { break }
        }
        #expect(echoed.count == payload.count)
        let firstDifference = zip(echoed, payload).prefix { $0.0 == $0.1 }.count
        #expect(echoed == payload, "the echo differs from byte \(firstDifference)")
        let received = eventually({ bed.tunnelOrigin.rawBytes(of: 1) }, until: { $0.count >= payload.count })
        #expect(received == payload, "the origin got \(received.count) bytes")
    }

    @Test("blind tunnel: a client's own ClientHello sent with the CONNECT head reaches the origin, whose certificate the client verifies")
    func tunnelClientHello() throws {
        let outcome = try bed.client(["--pipeline", "--request", "GET /bytes/100 HTTP/1.1\nHost: files.cdn.example.com\n\n"],
                                     target: Self.tunnelledTLSAuthority, ca: bed.world.pki.rootFile)
        #expect(outcome.connectStatus == 200, "\(outcome)")
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.peerSan?.contains("*.cdn.example.com") == true, "the origin's own certificate, not one of pinproxy's CA")
        #expect(outcome.responses.map(\.status) == [200])
        #expect(outcome.responses.first.map { Data($0.bytes) } == TestUpstream.pattern(100))
        let connections = tunnelledTLS.waitForConnections(1)
        #expect(connections.map(\.handshake_ok) == [true])
        #expect(connections.map(\.requests) == [1])
    }
}

import Foundation
import Testing
@testable import PinproxyRuntime

/// A new connection's first bytes are read at accept when they are already
/// there (what a client sends with its connect), and otherwise waited for
/// (`LoopWorker.accept`). Either way a session must see exactly the bytes
/// the client sent, however they were split between that first read and the
/// stream's own reads, and a client that leaves before sending anything must
/// leave nothing behind.
@Suite("Accepting: the first read", .serialized)
struct AcceptFirstReadTests {
    /// Runs `send` (a client's connect and its bytes) while every loop of the
    /// in-process daemon is held busy, so the bytes are in the socket before
    /// any loop can accept it: the connection takes the read at accept.
    static func whileLoopsHeld(_ bed: FaultBed, _ send: () throws -> Void) throws {
        let workers = try #require(bed.proxy).daemon.workers
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for worker in workers { worker.loop.execute { held.signal(); release.wait() } }
        for _ in workers { held.wait() }
        defer { for _ in workers { release.signal() } }
        try send()
        // Deliberate: loopback delivers within the send, this is margin.
        usleep(50_000)
    }

    @Test("a POST sent whole with the connect, head and 200 KiB body (far more than the first read), is relayed byte for byte")
    func largeFirstSegment() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let body = (0..<200 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let head = "POST \(bed.goodURL("/echo-length")) HTTP/1.1\r\nHost: api.example.com:8443\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        var connected: RawClient?
        try Self.whileLoopsHeld(bed) {
            connected = try RawClient(port: bed.world.forwardPort)
            #expect(connected?.send(Array(head.utf8) + body) == true)
        }
        let client = try #require(connected)
        var pending: [UInt8] = []
        let answer = RawHTTPResponse.read(from: client, pending: &pending, method: "POST")
        #expect(answer?.status == 200)
        let digest = Digest.sha256(body).map { String(format: "%02x", $0) }.joined()
        #expect(answer?.bodyText == "\(body.count) \(digest)\n", "\(answer?.bodyText ?? "no answer")")
        client.close()
        #expect(bed.waitForNoSockets(pooled: 2).clientSessions == 0)
    }

    @Test("a 40 KiB request head sent with the connect is parsed whole: its last field comes after the first read's 16 KiB")
    func headLongerThanFirstRead() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let filler = String(repeating: "f", count: 40 * 1024)
        var connected: RawClient?
        try Self.whileLoopsHeld(bed) {
            connected = try RawClient(port: bed.world.forwardPort)
            #expect(connected?.send("GET \(bed.goodURL("/bytes/10")) HTTP/1.1\r\nHost: api.example.com:8443\r\n"
                                 + "X-Filler: \(filler)\r\nConnection: close\r\n\r\n") == true)
        }
        let client = try #require(connected)
        var pending: [UInt8] = []
        let answer = RawHTTPResponse.read(from: client, pending: &pending)
        #expect(answer?.status == 200)
        #expect(answer?.body == Array(TestUpstream.pattern(10)))
        // `Connection: close` is the head's last field: honoured, so it was read.
        #expect(answer?.values("Connection") == ["close"])
        client.close()
    }

    @Test("two requests pipelined in the connect's first segment are both answered, in order")
    func pipelinedInFirstSegment() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        var connected: RawClient?
        try Self.whileLoopsHeld(bed) {
            connected = try RawClient(port: bed.world.forwardPort)
            #expect(connected?.send("GET \(bed.goodURL("/bytes/3")) HTTP/1.1\r\nHost: api.example.com:8443\r\n\r\n"
                                 + "GET \(bed.goodURL("/bytes/5")) HTTP/1.1\r\nHost: api.example.com:8443\r\nConnection: close\r\n\r\n") == true)
        }
        let client = try #require(connected)
        var pending: [UInt8] = []
        let first = RawHTTPResponse.read(from: client, pending: &pending)
        let second = RawHTTPResponse.read(from: client, pending: &pending)
        #expect(first?.status == 200 && first?.body == Array(TestUpstream.pattern(3)))
        #expect(second?.status == 200 && second?.body == Array(TestUpstream.pattern(5)))
        client.close()
    }

    @Test("a request sent 300 ms after the connect (nothing there at accept) is served")
    func requestAfterPause() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let client = try RawClient(port: bed.world.forwardPort)
        // Deliberate: the test is about a client that is silent when accepted.
        usleep(300_000)
        #expect(client.send("GET \(bed.goodURL("/bytes/10")) HTTP/1.1\r\nHost: api.example.com:8443\r\nConnection: close\r\n\r\n"))
        var pending: [UInt8] = []
        let answer = RawHTTPResponse.read(from: client, pending: &pending)
        #expect(answer?.status == 200 && answer?.body == Array(TestUpstream.pattern(10)))
        client.close()
    }

    @Test("50 clients that close or reset right after connecting, sending nothing, leave no socket; the next request is served")
    func leaveBeforeSending() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        // Half while the loops are held (the close or reset is there at accept), half not.
        try Self.whileLoopsHeld(bed) {
            for index in 0..<24 {
                let client = try RawClient(port: bed.world.forwardPort)
                if index % 2 == 0 { client.close() } else { client.reset() }
            }
        }
        for index in 0..<26 {
            let client = try RawClient(port: bed.world.forwardPort)
            if index % 2 == 0 { client.close() } else { client.reset() }
        }
        #expect(bed.waitForNoSockets().total == 0)
        try bed.expectNextRequestServed()
    }

    @Test("an accepted client socket has Nagle disabled: TCP_NODELAY is set on the listening socket, which accept copies")
    func acceptedSocketsHaveNoDelay() throws {
        guard let address = SocketAddress(ip: "127.0.0.1", port: 0) else { Issue.record("no address"); return }
        let listening = try ListeningSocket.bind(address)
        let client = try RawClient(port: listening.boundAddress.port)
        var accepted: Int32 = -1
        #expect(eventually { accepted = Glibc.accept(listening.descriptor, nil, nil); return accepted >= 0 })
        defer { if accepted >= 0 { Glibc.close(accepted) }; client.close(); listening.close() }
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length) == 0)
        #expect(value == 1)
    }
}

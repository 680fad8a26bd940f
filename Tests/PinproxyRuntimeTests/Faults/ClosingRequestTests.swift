import Foundation
import Synchronization
import Testing
@testable import PinproxyRuntime

/// A request that ends its connection (`Connection: close`, or HTTP/1.0
/// without keep-alive) and is complete when its head is: the client must
/// send nothing more (RFC 9112 §9.6), so the daemon stops reading that
/// client for the rest of the exchange (`ClientSession` at `startExchange`).
/// Every shape of such a request, and its neighbours that must still be
/// read, is answered in full and then closed in order (a FIN, no reset). A
/// client that leaves meanwhile is dropped: at once when it is read and
/// resets, once its answer is written otherwise.
@Suite("Requests that end their connection", .serialized)
struct ClosingRequestTests {
    /// What the client sends on a fresh connection, whole, in one write.
    struct Shape: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: @Sendable (_ url: String) -> String
        var halfClosesAfterSending = false
        /// The good upstream's path, and the body it answers with.
        var path = "/bytes/1000"
        var body = TestUpstream.pattern(1000)
        var testDescription: String { name }
    }

    static let head = "Host: api.example.com:8443\r\n"
    static let shapes: [Shape] = [
        Shape(name: "GET with Connection: close",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\n\r\n" }),
        Shape(name: "close among other Connection options",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: te, Close\r\nTE: trailers\r\n\r\n" }),
        Shape(name: "HTTP/1.0 without keep-alive",
              bytes: { "GET \($0) HTTP/1.0\r\n\(head)\r\n" }),
        Shape(name: "GET with Connection: close, then the client half-closes",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\n\r\n" }, halfClosesAfterSending: true),
        Shape(name: "POST with Connection: close and a body (read until complete)",
              bytes: { "POST \($0) HTTP/1.1\r\n\(head)Connection: close\r\nContent-Length: 5\r\n\r\nhello" },
              path: "/echo-length", body: Data("5 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\n".utf8)),
        Shape(name: "GET with Connection: close and Content-Length: 0",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\nContent-Length: 0\r\n\r\n" }),
        // A client breaking §9.6: the bytes behind the head arrive with it,
        // so they are read with it and dropped, and the close is still a FIN
        // (bytes left unread in the socket would make it a reset).
        Shape(name: "bytes behind a Connection: close request, in the same segment",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n" }),
    ]

    @Test("answered in full, then the connection closes in order", arguments: shapes)
    func answeredThenClosed(_ shape: Shape) throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let client = try RawClient(port: bed.world.forwardPort)
        #expect(client.send(shape.bytes(bed.goodURL(shape.path))))
        if shape.halfClosesAfterSending { client.shutdownWrite() }
        let (data, ending) = client.read(timeout: 10)
        client.close()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.") && text.contains(" 200 "), "got: \(text.prefix(60))")
        #expect(ending == .closed, "the daemon ended the connection with \(ending)")
        #expect(data.suffix(shape.body.count) == shape.body)
        #expect(bed.waitForNoSockets(pooled: 1).clientSessions == 0)
    }

    /// How a client leaves while a slow upstream (2 s) works on its request.
    struct Leaving: CustomTestStringConvertible, Sendable {
        let name: String
        /// The request ends its connection (`Connection: close`).
        let closesConnection: Bool
        /// Reset (SO_LINGER 0), or an orderly close (FIN).
        let resets: Bool
        /// The daemon drops the session before the answer comes.
        let droppedAtOnce: Bool
        var testDescription: String { name }
    }

    static let leavings = [
        Leaving(name: "a keep-alive client resets: read, so dropped at once", closesConnection: false, resets: true, droppedAtOnce: true),
        Leaving(name: "a keep-alive client closes: an end of stream is a half-close, the answer is still written",
                closesConnection: false, resets: false, droppedAtOnce: false),
        Leaving(name: "a Connection: close client resets: not read, dropped when its answer is written",
                closesConnection: true, resets: true, droppedAtOnce: false),
    ]

    @Test("a client that leaves while a slow upstream works is dropped, at once or at the answer; the daemon serves on",
          arguments: leavings)
    func leavesWhileWaiting(_ leaving: Leaving) throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let daemon = try #require(bed.proxy).daemon
        let open = { daemon.shared.openConnections.load(ordering: .relaxed) }
        let fields = leaving.closesConnection ? "Connection: close\r\n" : ""
        for _ in 0..<8 {
            let client = try RawClient(port: bed.world.forwardPort)
            #expect(client.send("GET \(bed.goodURL("/slow/2000/1000")) HTTP/1.1\r\n\(Self.head)\(fields)\r\n"))
            if leaving.resets { client.reset() } else { client.close() }
        }
        // A reset socket leaves /proc/net/tcp at once, so the socket census
        // cannot tell; the daemon's own count of open client connections can.
        if leaving.droppedAtOnce {
            #expect(eventually(timeout: 1.5) { open() == 0 }, "still open before the answers: \(open())")
        } else {
            // Deliberate: the answers come 2 s after the requests; until then nothing may end these sessions.
            usleep(1_000_000)
            #expect(open() == 8, "open before the answers: \(open())")
            #expect(eventually(timeout: 5) { open() == 0 }, "still open after the answers: \(open())")
        }
        try bed.expectNextRequestServed()
    }
}

import Foundation
import Synchronization
import Testing
@testable import PinproxyRuntime

/// A request that ends its connection (`Connection: close`, or HTTP/1.0
/// without keep-alive) and is complete when its head is: the client must
/// send nothing more (RFC 9112 §9.6), so the daemon stops reading that
/// client for the rest of the exchange (`ClientSession` at `startExchange`).
/// Every shape of such a request, and its neighbours that must still be
/// read, is answered in full and then closed in order (a FIN, no reset); a
/// client that resets meanwhile is dropped when its answer is written.
@Suite("Requests that end their connection", .serialized)
struct ClosingRequestTests {
    /// What the client sends on a fresh connection, whole, in one write.
    struct Shape: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: @Sendable (_ url: String) -> String
        let halfClosesAfterSending: Bool
        var testDescription: String { name }
    }

    static let head = "Host: api.example.com:8443\r\n"
    static let shapes: [Shape] = [
        Shape(name: "GET with Connection: close",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\n\r\n" }, halfClosesAfterSending: false),
        Shape(name: "close among other Connection options",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: te, Close\r\nTE: trailers\r\n\r\n" },
              halfClosesAfterSending: false),
        Shape(name: "HTTP/1.0 without keep-alive",
              bytes: { "GET \($0) HTTP/1.0\r\n\(head)\r\n" }, halfClosesAfterSending: false),
        Shape(name: "GET with Connection: close, then the client half-closes",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\n\r\n" }, halfClosesAfterSending: true),
        Shape(name: "POST with Connection: close and a body (read until complete)",
              bytes: { "POST \($0) HTTP/1.1\r\n\(head)Connection: close\r\nContent-Length: 5\r\n\r\nhello" },
              halfClosesAfterSending: false),
        Shape(name: "GET with Connection: close and Content-Length: 0",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\nContent-Length: 0\r\n\r\n" },
              halfClosesAfterSending: false),
        // A client breaking §9.6: the bytes behind the head arrive with it,
        // so they are read with it and dropped, and the close is still a FIN
        // (bytes left unread in the socket would make it a reset).
        Shape(name: "bytes behind a Connection: close request, in the same segment",
              bytes: { "GET \($0) HTTP/1.1\r\n\(head)Connection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n" },
              halfClosesAfterSending: false),
    ]

    @Test("answered in full, then the connection closes in order", arguments: shapes)
    func answeredThenClosed(_ shape: Shape) throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let client = try RawClient(port: bed.world.forwardPort)
        let body = shape.name.hasPrefix("POST") ? "/echo-length" : "/bytes/1000"
        #expect(client.send(shape.bytes(bed.goodURL(body))))
        if shape.halfClosesAfterSending { client.shutdownWrite() }
        let (data, ending) = client.read(timeout: 10)
        client.close()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.") && text.contains(" 200 "), "got: \(text.prefix(60))")
        #expect(ending == .closed, "the daemon ended the connection with \(ending)")
        if shape.name.hasPrefix("POST") {
            #expect(text.hasSuffix("5 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\n"))
        } else {
            #expect(data.suffix(1000) == Data(TestUpstream.pattern(1000)))
        }
        #expect(bed.waitForNoSockets(pooled: 1).clientSessions == 0)
    }

    @Test("a client that resets while its Connection: close request waits for a slow upstream is dropped; the daemon serves on")
    func resetWhileWaiting() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        for _ in 0..<8 {
            let client = try RawClient(port: bed.world.forwardPort)
            #expect(client.send("GET \(bed.goodURL("/slow/300/1000")) HTTP/1.1\r\n\(Self.head)Connection: close\r\n\r\n"))
            client.reset()
        }
        // The answers come after 300 ms and find the clients gone. A reset
        // socket leaves /proc/net/tcp at once, so the census cannot tell; the
        // daemon's own count of open client connections can.
        let daemon = try #require(bed.proxy).daemon
        let open = { daemon.shared.openConnections.load(ordering: .relaxed) }
        #expect(eventually(timeout: 5) { open() == 0 }, "still open: \(open())")
        try bed.expectNextRequestServed()
    }
}

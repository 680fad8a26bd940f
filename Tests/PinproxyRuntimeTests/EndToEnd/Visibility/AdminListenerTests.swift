import Foundation
import Testing
@testable import PinproxyRuntime

/// SPEC §6: the admin listener is read-only and answers hostile or
/// mistaken requests with a clear status, one request per connection; the
/// proxy keeps serving meanwhile.
@Suite("Admin listener: read-only, bounded, one answer per connection")
struct AdminListenerTests {
    let proxy: ProxyUnderTest
    let world: TestWorld

    init() throws {
        world = try TestWorld()
        try world.startUpstream()
        world.configuration.extra = #""admin": { "listen": "127.0.0.1:\#(ToolPaths.freePort())" },"#
        proxy = try world.startProxy()
    }

    private func exchange(_ request: [UInt8]) throws -> String {
        let address = try #require(proxy.daemon.adminAddress)
        let port = try #require(UInt16(address.split(separator: ":").last ?? ""))
        let client = try RawClient(port: port)
        client.send(request)
        let (data, ending) = client.read(timeout: 10)
        #expect(ending == .closed, "the admin listener closes after its one answer")
        return String(decoding: data, as: UTF8.self)
    }

    @Test("what is not a GET of /metrics or /status gets its own status and that status's reason phrase, and nothing changes",
          arguments: [
            ("POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n"),
            ("DELETE /status HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n"),
            ("GET /config HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 404 Not Found\r\n"),
            ("GET /metrics/../status HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 404 Not Found\r\n"),
            ("GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
             "HTTP/1.1 400 Bad Request\r\n"),
            ("\u{1}\u{2}garbage\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n"),
            ("GET /\(String(repeating: "m", count: 3000)) HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 414 URI Too Long\r\n"),
            ("POST /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
             "HTTP/1.1 501 Not Implemented\r\n"),
          ])
    func refusals(request: String, statusLine: String) throws {
        let answer = try exchange(Array(request.utf8))
        #expect(answer.hasPrefix(statusLine), "\(answer)")
        #expect(answer.contains("Connection: close\r\n"))
    }

    @Test("a head larger than 8 KiB is 431; HEAD gets the head without the body; a query is ignored")
    func boundsAndHead() throws {
        let huge = try exchange(Array("GET /metrics HTTP/1.1\r\nX: \(String(repeating: "a", count: 9000))\r\n\r\n".utf8))
        #expect(huge.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(huge.prefix(80))")
        let head = try exchange(Array("HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(head.hasPrefix("HTTP/1.1 200 "))
        #expect(head.hasSuffix("\r\n\r\n"), "HEAD has no body")
        let query = try exchange(Array("GET /status?rule=x HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(query.hasPrefix("HTTP/1.1 200 "))
        #expect(query.contains("application/json"))
    }

    @Test("a client that connects and sends nothing does not keep the proxy from serving")
    func silentClientsDoNotBlock() throws {
        let address = try #require(proxy.daemon.adminAddress)
        let port = try #require(UInt16(address.split(separator: ":").last ?? ""))
        let silent = try (0..<40).map { _ in try RawClient(port: port) }
        let result = try Curl.run(["-x", proxy.forwardProxy, "http://api.example.com/bytes/10"])
        #expect(result.status == 200)
        silent.forEach { $0.close() }
        let metrics = try MetricsScrape.fetch(address)
        #expect(metrics["pinproxy_connections_accepted_total", ["listener": "127.0.0.1:\(proxy.forwardPort)", "mode": "forward"]] == 1)
    }
}

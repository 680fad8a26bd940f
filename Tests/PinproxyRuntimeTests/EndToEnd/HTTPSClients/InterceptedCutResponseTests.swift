import Foundation
import Testing

extension HTTPSClientsEndToEndTests {
    /// The intercepted side of `UpstreamFaultTests.cutAfterHead`: inside a
    /// tunnel the client's TLS is pinproxy's, so a whole body delimited by the
    /// close ends with pinproxy's close_notify, and a cut one with a reset and
    /// no close_notify (RFC 9112 §8, §9.8; Python's ssl reports both as an EOF
    /// without close_notify). A client reading chunked framing sees the cut
    /// there, and gets an orderly close.
    @Suite("a response cut after its head, inside an intercepted tunnel")
    struct InterceptedCutResponse {
        @Test("close_notify only after a whole body; a reset when a body that ends at the close was cut", arguments: [
            ("/cut/close/notify", "HTTP/1.1", "close_notify", "hello"),
            ("/cut/close/eof", "HTTP/1.1", "eof_without_close_notify", "hello"),
            ("/cut/close/reset", "HTTP/1.0", "eof_without_close_notify", "hello"),
            ("/cut/chunked/bad-chunk", "HTTP/1.0", "eof_without_close_notify", "hello"),
            ("/cut/chunked/eof", "HTTP/1.1", "close_notify", "5\r\nhello\r\n"),
        ])
        func cutInsideTunnel(path: String, version: String, end: String, body: String) throws {
            let world = try ConnectWorld(origin: .bytes, payload: .small)
            let result = try LoadTool.run("cut_response_client.py", [
                "--proxy-port", "\(world.proxy.forwardPort)", "--host", ConnectHost.pinned, "--path", path,
                "--version", version, "--intercept", "--ca", world.interceptionRoot,
            ], timeout: 20)
            #expect(result["status_line"] as? String == "\(version) 200 OK", "\(result)")
            #expect(result["end"] as? String == end, "\(result)")
            #expect(result["body"] as? String == body, "\(result)")
            E2EVerdict.expectNoEvent(proxy: world.proxy)
        }
    }
}

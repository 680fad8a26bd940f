import Foundation
import Testing

extension HTTPSClientsEndToEndTests {
    /// What Java's HttpClient often does on an intercepted connection, and
    /// curl now and then: its first request leaves in the same TCP segment as its
    /// TLS Finished. pinproxy reads the client with OpenSSL's read-ahead, so
    /// the one `read(2)` that completes the handshake takes the request's
    /// record into OpenSSL's buffer too, where no socket readiness will ever
    /// announce it. Tests/Tools/coalescing_tls_client.py sends exactly that,
    /// every time, where the real clients only race into it.
    @Suite("a first request sent in the same segment as the client's Finished")
    struct CoalescedFirstRequest {
        @Test("a request coalesced with the Finished is answered at once, not when the client next sends")
        func coalescedRequestAnswered() throws {
            let world = try ConnectWorld(origin: .bytes, payload: .small)
            let result = try ChildProcess.run("/usr/bin/env", [
                "python3", ToolPaths.tool("coalescing_tls_client.py"), "--proxy-port", String(world.proxy.forwardPort),
                "--host", ConnectHost.pinned, "--ca", world.interceptionRoot, "--target", "/bytes/1000", "--timeout", "5",
            ], timeout: 30)
            let line = try #require(result.outputLines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
                as? [String: Any], "stdout \(result.output) stderr \(result.errorOutput)")
            #expect(line["connect"] as? String == "HTTP/1.1 200 Connection established")
            // The scenario itself: without it the test would prove nothing.
            #expect(line["coalesced"] as? Bool == true)
            #expect(line["status"] as? Int == 200, "\(line["error"] ?? "")")
            #expect(line["body_length"] as? Int == 1000)
            E2EVerdict.expectNoEvent(proxy: world.proxy)
        }
    }
}

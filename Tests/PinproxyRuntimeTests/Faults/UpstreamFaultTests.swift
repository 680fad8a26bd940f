import Foundation
import Testing

/// Hostile upstreams on loopback (issue 7, fault injection): each fault gets
/// the SPEC §3 answer, the daemon serves the next request, and every socket
/// the fault involved is closed afterwards.
@Suite("Fault injection: hostile upstreams", .serialized)
struct UpstreamFaultTests {
    @Test("a reset during the TLS handshake is answered 502 tls_protocol_error")
    func resetDuringHandshake() throws {
        let bed = try FaultBed(hostile: .fault(.resetHandshake))
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == "pinproxy; error=tls_protocol_error")
        let records = try #require(bed.faultUpstream?.waitForConnections(1))
        #expect(records.count == 1)
        #expect(records.first?.head_bytes ?? 0 > 0, "the server read a ClientHello before resetting")
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("a handshake that never completes is answered 504 connection_timeout after timeouts.handshake")
    func handshakeNeverCompletes() throws {
        let bed = try FaultBed(hostile: .upstream(["--stall-handshake"]), timeouts: #""handshake": "1s","#)
        let start = ContinuousClock.now
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        let elapsed = start.secondsElapsed
        #expect(result.status == 504)
        #expect(result.header("proxy-status") == "pinproxy; error=connection_timeout")
        #expect(elapsed >= 0.9 && elapsed < 3, "answered after \(elapsed) s")
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("an upstream that stalls after the handshake is answered 504 http_response_timeout after timeouts.idle")
    func stallAfterHandshake() throws {
        let bed = try FaultBed(hostile: .fault(.stallResponse), timeouts: #""idle": "1s","#)
        let start = ContinuousClock.now
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        let elapsed = start.secondsElapsed
        #expect(result.status == 504)
        #expect(result.header("proxy-status") == "pinproxy; error=http_response_timeout")
        #expect(elapsed >= 0.9 && elapsed < 3, "answered after \(elapsed) s")
        let records = try #require(bed.faultUpstream?.waitForConnections(1))
        #expect(records.first?.handshake_ok == true)
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("an upstream closing in the middle of a body leaves the client a truncated body (curl exit 18)")
    func closeMidBody() throws {
        let bed = try FaultBed(hostile: .upstream(["--close-mid-body"]))
        let size = 200_000
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/\(size)")], timeout: 10)
        #expect(result.exitCode == 18)
        #expect(result.status == 200)
        #expect(result.header("content-length") == "\(size)")
        #expect(result.body.count <= size / 2, "received \(result.body.count) bytes")
        #expect(result.body == TestUpstream.pattern(result.body.count), "what arrived is a prefix of the real body")
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    /// RFC 9112 §8: a body delimited by the close is whole only when the
    /// close is orderly, and on TLS only close_notify is (§9.8: an incomplete
    /// close leaves it incomplete). upstream.py's `/cut/KIND/END` sends a head
    /// and "hello", then ends the connection by END. A client whose body ends
    /// at the close (any client of a `close` body; a 1.0 client of a chunked
    /// one, which gets it dechunked) can tell a cut only from a reset; any
    /// other sees the cut in the chunked framing and gets a FIN.
    @Test("a response cut after its head resets a client whose body ends at the close, and only that client", arguments: [
        ("/cut/close/notify", "HTTP/1.1", "eof", "hello"),  // whole: close_notify ended it
        ("/cut/close/notify", "HTTP/1.0", "eof", "hello"),
        ("/cut/close/eof", "HTTP/1.1", "reset", "hello"),  // a FIN without close_notify: a truncation
        ("/cut/close/eof", "HTTP/1.0", "reset", "hello"),
        ("/cut/close/reset", "HTTP/1.1", "reset", "hello"),
        ("/cut/close/reset", "HTTP/1.0", "reset", "hello"),
        ("/cut/chunked/notify", "HTTP/1.0", "reset", "hello"),
        ("/cut/chunked/eof", "HTTP/1.0", "reset", "hello"),
        ("/cut/chunked/bad-chunk", "HTTP/1.0", "reset", "hello"),
        ("/cut/chunked/notify", "HTTP/1.1", "eof", "5\r\nhello\r\n"),  // no last chunk: the cut shows
        ("/cut/chunked/eof", "HTTP/1.1", "eof", "5\r\nhello\r\n"),
        ("/cut/chunked/bad-chunk", "HTTP/1.1", "eof", "5\r\nhello\r\n"),
    ])
    func cutAfterHead(path: String, version: String, end: String, body: String) throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let result = try LoadTool.run("cut_response_client.py", ["--proxy-port", "\(bed.world.forwardPort)",
                                                                 "--host", "api.example.com", "--path", path,
                                                                 "--version", version], timeout: 20)
        #expect(result["status_line"] as? String == "\(version) 200 OK", "\(result)")
        #expect(result["end"] as? String == end, "\(result)")
        #expect(result["body"] as? String == body, "\(result)")
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("a body delimited by the close and ended without close_notify is logged as a truncation; one ended with it is not")
    func truncationLogged() throws {
        let bed = try FaultBed(hostile: .upstream([]), runtime: .binary)
        let daemon = try bed.world.startDaemon()
        let cut = try Curl.run(bed.proxyArguments + [bed.hostileURL("/cut/close/eof")], timeout: 10)
        #expect(cut.exitCode == 56, "curl: Connection reset by peer")
        let line = try daemon.waitForOutput { text in
            text.split(separator: "\n").first { $0.contains("api.example.com:443 ended a body delimited by the close without TLS close_notify") }
        }
        #expect(line.hasPrefix("proxy: "))
        let whole = try Curl.run(bed.proxyArguments + [bed.hostileURL("/cut/close/notify")], timeout: 10)
        #expect(whole.exitCode == 0 && whole.bodyText == "hello")
        try bed.expectNextRequestServed()
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
        let truncations = daemon.stderrText.components(separatedBy: "without TLS close_notify").count - 1
        #expect(truncations == 1, "\(daemon.stderrText)")
    }

    @Test("a response head that never ends is answered 502 http_protocol_error once it exceeds max_header_bytes")
    func endlessResponseHead() throws {
        // An idle timeout far above the bound shows the answer comes from the size limit.
        let bed = try FaultBed(hostile: .fault(.endlessHead), timeouts: #""idle": "8s","#,
                               limits: #""max_header_bytes": 16384,"#)
        let start = ContinuousClock.now
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        let elapsed = start.secondsElapsed
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == #"pinproxy; error=http_protocol_error; details="response header section too large""#)
        #expect(elapsed < 2, "answered after \(elapsed) s")
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("bytes that are not TLS records after the handshake are answered 502 and never relayed")
    func invalidTLSRecords() throws {
        let bed = try FaultBed(hostile: .fault(.garbageRecords), timeouts: #""idle": "8s","#)
        let start = ContinuousClock.now
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        let elapsed = start.secondsElapsed
        #expect(result.status == 502)
        // SPEC §3: "other TLS failure → 502 tls_protocol_error". Guards the
        // mapping of the OpenSSL error behind a failed read: a record that
        // does not decode is a TLS failure, not connection_terminated.
        #expect(result.header("proxy-status") == "pinproxy; error=tls_protocol_error")
        #expect(!result.bodyText.contains("hello"), "the plaintext behind the garbage must not reach the client")
        #expect(elapsed < 2, "answered after \(elapsed) s")
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("a TLS failure mid-body cuts the client and is logged under tls in OpenSSL's words, not as a plain end")
    func tlsFailureMidBody() throws {
        let bed = try FaultBed(hostile: .fault(.garbageMidBody), runtime: .binary)
        let daemon = try bed.world.startDaemon()
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/100")], timeout: 10)
        // The head went out with its Content-Length: the client sees a short body (curl: 18).
        #expect(result.status == 200 && result.exitCode == 18, "curl exit \(result.exitCode)")
        #expect(result.bodyText == "hello")
        let line = try daemon.waitForOutput { text in
            text.split(separator: "\n").first { $0.contains("api.example.com:443 failed mid-response: ") }
        }
        // The TLS subsystem, and OpenSSL's own words (its reason code for a record that is no record).
        #expect(line.hasPrefix("tls: ") && line.contains("SSL routines"), "\(line)")
        try bed.expectNextRequestServed()
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }

    @Test("an upstream speaking plain HTTP on the port: 502 tls_protocol_error, and body and log line say it does not speak TLS")
    func plainHTTPUpstream() throws {
        let bed = try FaultBed(hostile: .fault(.plainHTTP), runtime: .binary)
        let daemon = try bed.world.startDaemon()
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == "pinproxy; error=tls_protocol_error")
        // OpenSSL's "wrong version number" alone sends an operator looking for a TLS version setting.
        let words = "the upstream at 127.0.0.1:\(bed.hostilePort) does not speak TLS on port \(bed.hostilePort)"
        #expect(result.bodyText.contains(words), "body: \(result.bodyText)")
        #expect(!result.bodyText.contains("Bad Request"), "the plain-HTTP answer must not reach the client")
        let line = try daemon.waitForOutput { text in
            text.split(separator: "\n").first { $0.contains("api.example.com:443: \(words)") }
        }
        #expect(line.contains("is it a plain-HTTP port?"))
        try bed.expectNextRequestServed()
        daemon.send(SIGTERM)
        #expect(daemon.waitForExit(timeout: 20) == 0)
    }

    @Test("an upstream answering 413 before the 1 MiB request body is sent: the client gets the 413")
    func answerBeforeRequestBody() throws {
        let bed = try FaultBed(hostile: .fault(.earlyAnswer))
        let file = bed.world.directory.path + "/upload.bin"
        try Data(repeating: 0x61, count: 1 << 20).write(to: URL(fileURLWithPath: file))
        // No Expect: 100-continue, so curl sends the body at once.
        let result = try Curl.run(bed.proxyArguments + ["-H", "Expect:", "--data-binary", "@\(file)",
                                                        bed.hostileURL("/upload")], timeout: 10)
        #expect(result.status == 413)
        #expect(result.bodyText == "request body not wanted\n")
        let records = try #require(bed.faultUpstream?.waitForConnections(1))
        #expect(records.first?.handshake_ok == true)
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    @Test("a response with both Content-Length and Transfer-Encoding is answered 502 http_protocol_error")
    func contentLengthAndTransferEncoding() throws {
        let bed = try FaultBed(hostile: .fault(.contentLengthAndTransferEncoding))
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL("/bytes/10")], timeout: 10)
        #expect(result.status == 502)
        #expect(result.header("proxy-status")
                == #"pinproxy; error=http_protocol_error; details="both content-length and transfer-encoding""#)
        #expect(!result.bodyText.contains("hello"))
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }

    /// SPEC §3: an invalid response is not relayed. Chunk framing that
    /// arrived with the head is checked before the head goes to the client,
    /// wherever in the body the framing breaks.
    @Test("chunk framing broken in bytes that came with the head: 502 http_protocol_error, nothing relayed", arguments: [
        ("/first-size", "invalid chunk size"),
        ("/later-size", "invalid chunk size"),
        ("/overflowing-size", "chunk size overflow"),
        ("/extension", "invalid chunk extension"),
        ("/bare-lf", "bare lf in chunk line"),
        ("/data-end", "missing crlf after chunk data"),
        ("/trailer", "invalid trailer: obs-fold or whitespace at line start"),
    ])
    func invalidChunkFramingWithHead(path: String, reason: String) throws {
        let bed = try FaultBed(hostile: .fault(.invalidChunkFraming))
        let result = try Curl.run(bed.proxyArguments + [bed.hostileURL(path)], timeout: 10)
        #expect(result.exitCode == 0)
        #expect(result.status == 502)
        #expect(result.header("proxy-status") == #"pinproxy; error=http_protocol_error; details="\#(reason)""#)
        #expect(!result.bodyText.contains("hello"))
        try bed.expectNextRequestServed()
        #expect(bed.waitForNoSockets().total == 0)
    }
}

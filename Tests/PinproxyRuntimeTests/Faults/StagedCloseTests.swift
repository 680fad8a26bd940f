import Foundation
import Testing

/// RFC 9112 §9.6, with real clients: when pinproxy answers a request whose
/// body is still coming and ends the connection, the client gets the answer.
/// Python's http.client (under requests, urllib3 and pip) writes the whole
/// body before it reads: a proxy that closed with body bytes unread would
/// make its kernel reset the connection, and the client's write would fail
/// instead. So the daemon closes in stages: the answer, a FIN, then what the
/// client still sends is read and dropped until it closes. Every phase that
/// can refuse a request is covered: its head (400, 508), its upstream
/// (a blocked chain, 502), the upstream's own early answer (413), and the
/// same inside an intercepted CONNECT (TLS: close_notify, then the FIN).
@Suite("Staged close: an answer before the upload's end reaches the client", .serialized)
struct StagedCloseTests {
    /// What upload_client.py saw.
    struct Upload: Decodable, CustomStringConvertible {
        var sendError: String?
        var status: Int?
        var proxyStatus: String?
        var body: String
        var readError: String?
        var sent: Int

        var description: String {
            "status \(status.map(String.init) ?? "-"), sent \(sent), send error \(sendError ?? "none"), read error \(readError ?? "none")"
        }

        /// Runs upload_client.py against pinproxy's forward listener on `proxyPort`.
        static func run(proxyPort: UInt16, _ arguments: [String]) throws -> Upload {
            let result = try ChildProcess.run("/usr/bin/env", ["python3", ToolPaths.tool("upload_client.py"),
                                                               "--proxy-port", "\(proxyPort)"] + arguments, timeout: 60)
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            guard let upload = try? decoder.decode(Upload.self, from: Data(result.output.utf8)) else {
                throw TestFailure("upload_client.py \(arguments.joined(separator: " ")): \(result.combinedOutput)")
            }
            return upload
        }
    }

    /// 32 MiB: far beyond what the kernel's buffers and pinproxy's input take
    /// while nobody reads, so the client is still writing when the answer comes.
    static let size = 32 << 20

    static func expectAnswered(_ upload: Upload, status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(upload.sendError == nil, "\(upload)", sourceLocation: sourceLocation)
        #expect(upload.status == status, "\(upload)", sourceLocation: sourceLocation)
        #expect(upload.sent > size, "the whole body and its head went out: \(upload)", sourceLocation: sourceLocation)
    }

    @Test("a head refused for a framing-like field name (400): the uploader reads the 400")
    func refusedHead() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let upload = try Upload.run(proxyPort: bed.world.forwardPort,
                                    ["--url", bed.goodURL("/echo-length"), "--header", "Content_Length: 1"])
        Self.expectAnswered(upload, status: 400)
        #expect(bed.waitForNoSockets(pooled: 1).clientSessions == 0)
        try bed.expectNextRequestServed()
    }

    @Test("a request addressed to pinproxy itself (508): the uploader reads the 508")
    func proxyLoop() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let upload = try Upload.run(proxyPort: bed.world.forwardPort,
                                    ["--url", "http://127.0.0.1:\(bed.world.forwardPort)/upload"])
        Self.expectAnswered(upload, status: 508)
        #expect(bed.waitForNoSockets().clientSessions == 0)
        try bed.expectNextRequestServed()
    }

    @Test("an upstream the trust policy blocks (502): the uploader reads the 502 with its Proxy-Status")
    func blockedUpstream() throws {
        let bed = try FaultBed(hostile: .impostor)
        let upload = try Upload.run(proxyPort: bed.world.forwardPort, ["--url", bed.hostileURL("/upload")])
        Self.expectAnswered(upload, status: 502)
        #expect(upload.proxyStatus?.hasPrefix("pinproxy; error=tls_certificate_error") == true, "\(upload.proxyStatus ?? "-")")
        #expect(bed.waitForNoSockets().total == 0)
        try bed.expectNextRequestServed()
    }

    @Test("an upstream that answers 413 before reading the upload: the uploader reads the 413")
    func earlyUpstreamAnswer() throws {
        let bed = try FaultBed(hostile: .fault(.earlyAnswer))
        let upload = try Upload.run(proxyPort: bed.world.forwardPort, ["--url", bed.hostileURL("/upload")])
        Self.expectAnswered(upload, status: 413)
        #expect(upload.body == "request body not wanted\n")
        #expect(bed.waitForNoSockets().total == 0)
        try bed.expectNextRequestServed()
    }

    @Test("inside an intercepted CONNECT, a request for another host (421): the uploader reads the 421 over TLS")
    func refusedInsideInterception() throws {
        let bed = try ConnectBed()
        let upload = try Upload.run(proxyPort: bed.proxy.forwardPort,
                                    ["--tunnel", ConnectBed.interceptedAuthority, "--ca", bed.caRoot,
                                     "--url", "/upload", "--header", "Host: other.example.com"])
        Self.expectAnswered(upload, status: 421)
        #expect(bed.originHeads().isEmpty)
        #expect(bed.census(pooled: 1).clientSessions == 0)
        try bed.expectInterceptedClientServed()
    }

    /// The staged close is bounded: a client that reads its answer and then
    /// neither sends nor closes is closed after 5 s of silence (as nginx's
    /// `lingering_timeout`). Until then the connection is the daemon's.
    @Test("a client that goes silent after the answer, without closing, is closed after 5 s")
    func silentClientIsClosed() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        let client = try RawClient(port: bed.world.forwardPort)
        #expect(client.send("POST \(bed.goodURL("/echo-length")) HTTP/1.1\r\nHost: api.example.com:8443\r\n"
                            + "Content_Length: 1\r\nContent-Length: 1000000\r\n\r\n"))
        let sentSome = client.send([UInt8](repeating: 0x75, count: 4096))
        #expect(sentSome)
        let (data, ending) = client.read(timeout: 5)
        #expect(String(decoding: data.prefix(12), as: UTF8.self) == "HTTP/1.1 400")
        // The answer ends with a FIN (the write side's shutdown), before the daemon closes.
        #expect(ending == .closed)
        let start = ContinuousClock.now
        let tookMore = client.send([UInt8](repeating: 0x75, count: 4096))
        #expect(tookMore, "bytes after the answer are still taken")
        Thread.sleep(forTimeInterval: 1)
        #expect(bed.census().clientSessions == 1, "the connection is held while the client may still send")
        let left = bed.waitForNoSockets(pooled: 1, timeout: 10)
        #expect(left.clientSessions == 0, "left: \(left)")
        let waited = start.secondsElapsed
        #expect(waited >= 4.5 && waited < 9, "closed after \(waited) s")
        client.close()
        try bed.expectNextRequestServed()
    }

    /// The linger's bounds start once the answer is written: before, only
    /// the write timeout bounds a staged close, as it bounds any answer. An
    /// HTTP/1.0 keep-alive client of a chunked response gets it delimited by
    /// the close, so its connection ends in stages. This one reads nothing
    /// for longer than the 5 s a silent client is given, with a receive
    /// buffer of a few KiB: pinproxy has the whole response from upstream
    /// and holds most of it in its output, and the client must still get
    /// every byte, then the close.
    @Test("a slow reader of a response that ends the connection gets all of it, however long it pauses")
    func slowReaderGetsTheWholeResponse() throws {
        let bed = try FaultBed(hostile: .upstream([]))
        // What the kernel holds for a client that reads nothing (on loopback
        // an accepted socket's send buffer starts at tcp_wmem's maximum),
        // and 256 KiB more: under the relay's 512 KiB watermark, so the
        // exchange ends while the client pauses, with that much in pinproxy.
        let size = try Self.kernelHolds(receiveBuffer: 4096) + 256 * 1024
        let client = try RawClient(port: bed.world.forwardPort, receiveBuffer: 4096)
        #expect(client.send("GET \(bed.goodURL("/chunked/\(size)")) HTTP/1.0\r\nHost: api.example.com:8443\r\n"
                            + "Connection: keep-alive\r\n\r\n"))
        Thread.sleep(forTimeInterval: 6.5)
        let (whole, ending) = client.read(timeout: 30)
        let headEnd = try #require(whole.range(of: Data("\r\n\r\n".utf8)))
        #expect(String(decoding: whole[..<headEnd.lowerBound], as: UTF8.self).contains("Connection: close"))
        let body = whole[headEnd.upperBound...]
        #expect(body.count == size)
        #expect(body == TestUpstream.pattern(size))
        #expect(ending == .closed)
        client.close()
        #expect(bed.waitForNoSockets(pooled: 1).clientSessions == 0)
    }

    /// How many bytes a loopback connection's kernel buffers take from a
    /// writer whose reader, with a `receiveBuffer` SO_RCVBUF, reads nothing.
    static func kernelHolds(receiveBuffer: Int) throws -> Int {
        let script = """
            import socket
            listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen()
            reader = socket.socket(); reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, \(receiveBuffer))
            reader.connect(listener.getsockname())
            writer, _ = listener.accept(); writer.setblocking(False)
            total = 0
            try:
                while True: total += writer.send(b"x" * 16384)
            except BlockingIOError: pass
            print(total)
            """
        let result = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script], timeout: 30)
        guard let total = Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("measuring the kernel's buffers: \(result.combinedOutput)")
        }
        return total
    }

    /// At `limits.max_connections` a new connection is answered 503 and
    /// closed at once, not held. The request that came with its connect is
    /// in the socket unread; closed with it, the socket would reset.
    @Test("at the connection limit, a client whose request came with its connect reads the 503, then an orderly close")
    func connectionLimitDiscardsTheRequest() throws {
        let bed = try FaultBed(hostile: .upstream([]), limits: #""max_connections": 1,"#)
        let held = try RawClient(port: bed.world.forwardPort)
        #expect(held.send("GET "))   // a head begun: accepted now, not after the kernel's deferral
        _ = eventually(timeout: 5) { bed.census().clientSessions >= 1 }
        try #require(bed.census().clientSessions == 1)
        for _ in 0..<5 {
            let client = try RawClient(port: bed.world.forwardPort)
            #expect(client.send("POST \(bed.goodURL("/echo-length")) HTTP/1.1\r\nHost: api.example.com:8443\r\n"
                                + "Content-Length: 8192\r\n\r\n" + String(repeating: "u", count: 8192)))
            let (data, ending) = client.read(timeout: 5)
            #expect(String(decoding: data.prefix(12), as: UTF8.self) == "HTTP/1.1 503")
            #expect(ending == .closed)
            client.close()
        }
        held.close()
        #expect(bed.waitForNoSockets(pooled: 1).clientSessions == 0)
    }
}

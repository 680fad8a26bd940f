import Foundation
import Testing
@testable import PinproxyRuntime

/// The data path end to end: curl → pinproxy (in process, real sockets and
/// loops) → a real TLS server on loopback, with a PKI generated per test.
@Suite("Proxy data path end to end", .serialized)
struct ProxyEndToEndTests {
    let upstream: TestUpstream
    let proxy: ProxyUnderTest
    // Declared last, so released last: the world then stops the proxy before
    // it kills the upstream.
    let world: TestWorld

    init() throws {
        world = try TestWorld()
        upstream = try world.startUpstream()
        world.configuration.threads = 2
        proxy = try world.startProxy()
    }

    @Test("a forward-proxy GET is fetched over verified TLS and relayed byte for byte")
    func forwardGet() throws {
        let result = try Curl.run(["-x", proxy.forwardProxy, "http://api.example.com/bytes/100"])
        #expect(result.status == 200)
        #expect(result.body == TestUpstream.pattern(100))
        #expect(result.header("via") == "1.1 pinproxy")
        #expect(proxy.sink.events.isEmpty)
    }

    @Test("a gateway listener sends every request to its fixed upstream")
    func gatewayGet() throws {
        let result = try Curl.run(["\(proxy.gatewayBase)/bytes/1000"])
        #expect(result.status == 200)
        #expect(result.body == TestUpstream.pattern(1000))
    }

    @Test("HEAD returns the head without a body")
    func head() throws {
        // curl -I writes the head as its output: nothing may follow it.
        let result = try Curl.run(["-I", "-x", proxy.forwardProxy, "http://api.example.com/bytes/100"])
        #expect(result.status == 200)
        #expect(result.header("content-length") == "100")
        #expect(result.bodyText.hasPrefix("HTTP/1.1 200"))
        #expect(result.bodyText.hasSuffix("\r\n\r\n"))
    }

    @Test("a 1 MiB POST with Content-Length and a chunked upload arrive intact")
    func uploads() throws {
        let body = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255) })
        let file = world.directory.file("upload.bin")
        try body.write(to: URL(fileURLWithPath: file))
        let digest = String(try ChildProcess.run("/usr/bin/sha256sum", [file]).output.prefix(64))
        let plain = try Curl.run(["-x", proxy.forwardProxy, "--data-binary", "@\(file)", "http://api.example.com/echo-length"])
        #expect(plain.bodyText == "\(body.count) \(digest)\n")
        let chunked = try Curl.run(["-x", proxy.forwardProxy, "-H", "Transfer-Encoding: chunked",
                                    "--data-binary", "@\(file)", "http://api.example.com/echo-length"])
        #expect(chunked.bodyText == "\(body.count) \(digest)\n")
    }

    @Test("a 64 MiB download is relayed byte-exact, and a chunked response too")
    func largeDownload() throws {
        let size = 64 << 20
        let result = try Curl.run(["-x", proxy.forwardProxy, "http://api.example.com/bytes/\(size)"], timeout: 120)
        #expect(result.body.count == size)
        #expect(result.body == TestUpstream.pattern(size))
        let chunked = try Curl.run(["-x", proxy.forwardProxy, "http://api.example.com/chunked/300000"])
        #expect(chunked.body == TestUpstream.pattern(300_000))
    }

    @Test("50 keep-alive requests on one client connection need far fewer upstream handshakes")
    func keepAlive() throws {
        let before = try upstream.stats(caFile: world.pki.rootFile)["handshakes"] ?? 0
        let urls = (0..<50).map { "http://api.example.com/bytes/\($0 + 1)" }
        let result = try Curl.run(["-x", proxy.forwardProxy] + urls)
        #expect(result.exitCode == 0)
        #expect(result.status == 200)
        // The stats request itself is one handshake, made directly.
        let after = try upstream.stats(caFile: world.pki.rootFile)["handshakes"] ?? 0
        let proxied = after - before - 1
        #expect(proxied >= 1 && proxied <= 2, "upstream handshakes for 50 requests: \(proxied)")
    }

    @Test("pipelined requests on one connection are answered in order")
    func pipelining() throws {
        let client = try RawClient(port: proxy.forwardPort)
        client.send("GET http://api.example.com/bytes/3 HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
                    + "GET http://api.example.com/bytes/5 HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n")
        let (received, ending) = client.read(timeout: 10)
        #expect(ending == .closed)
        let text = String(decoding: received, as: UTF8.self)
        let heads = text.components(separatedBy: "HTTP/1.1 200 OK")
        #expect(heads.count == 3)
        #expect(text.contains("Content-Length: 3"))
        #expect(text.range(of: "Content-Length: 3")!.lowerBound < text.range(of: "Content-Length: 5")!.lowerBound)
    }

    @Test("CONNECT to an unlisted host is a blind tunnel the client's own TLS runs through; a gateway refuses CONNECT with 405")
    func connectTunnelsUnlistedAndGatewayRefuses() throws {
        // No `hosts` rule names api.example.com and default_policy is "default":
        // the client (curl, trusting the world's root) validates the origin itself.
        let tunnelled = try Curl.run(["-p", "-x", proxy.forwardProxy, "--cacert", world.pki.rootFile,
                                      "https://api.example.com/bytes/100"])
        #expect(tunnelled.exitCode == 0)
        #expect(tunnelled.body.count == 100)
        #expect(proxy.sink.events.isEmpty)

        let client = try RawClient(port: proxy.gatewayPort)
        client.send("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n")
        let raw = String(decoding: client.readSome(timeout: 10).data, as: UTF8.self)
        #expect(raw.hasPrefix("HTTP/1.1 405"))
        #expect(raw.contains("\r\nProxy-Status: pinproxy; error=http_request_error; details=\"connect is not supported\"\r\n"))
    }

    @Test("an ambiguous request (Content-Length and Transfer-Encoding) gets 400 and nothing reaches the upstream")
    func smugglingRefused() throws {
        let before = try upstream.stats(caFile: world.pki.rootFile)["requests"] ?? 0
        let raw = try Self.rawExchange(port: proxy.forwardPort,
            "POST http://api.example.com/echo-length HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(raw.hasPrefix("HTTP/1.1 400"))
        // RFC 9209's client-error type tells pinproxy's 400 from an origin's.
        #expect(raw.contains("\r\nProxy-Status: pinproxy; error=http_request_error; details=\""))
        let after = try upstream.stats(caFile: world.pki.rootFile)["requests"] ?? 0
        #expect(after == before + 1)   // only the stats request itself
    }

    /// Sends raw bytes and reads until the server closes (10 s at most).
    static func rawExchange(port: UInt16, _ request: String) throws -> String {
        let client = try RawClient(port: port)
        client.send(request)
        return String(decoding: client.read(timeout: 10).data, as: UTF8.self)
    }
}

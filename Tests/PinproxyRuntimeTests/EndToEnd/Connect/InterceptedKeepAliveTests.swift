import Foundation
import Testing

/// Inside an intercepted tunnel "the requests inside run exactly as plain
/// requests do" (SPEC §3.1, §3): persistent connections, pipelined requests
/// answered in order (RFC 9112 §9.3), `Connection: close` honoured (§9.6),
/// and the first request over the upstream connection verified before the
/// `200`. The client's last handshake flight leaves with its first request
/// in one write (as a client that writes at once after the handshake sends
/// it), or on its own: both must be served.
@Suite("CONNECT interception: keep-alive, pipelining and Connection: close inside the tunnel", .serialized)
struct InterceptedKeepAliveTests {
    let bed: ConnectBed

    init() throws {
        bed = try ConnectBed()
    }

    static func get(_ target: String, closing: Bool = false) -> String {
        "GET \(target) HTTP/1.1\nHost: api.example.com\n" + (closing ? "Connection: close\n" : "") + "\n"
    }

    @Test("three requests in turn on one client TLS connection are answered over the one upstream connection verified before the 200 (the Finished with the first request, or alone)",
          arguments: [false, true])
    func keepAlive(finishedSentAlone: Bool) throws {
        let targets = ["/ka-1", "/ka-2", "/ka-3"]
        let outcome = try bed.client((finishedSentAlone ? ["--flush-finished"] : [])
                                     + targets.flatMap { ["--request", Self.get($0)] })
        #expect(outcome.handshake == "ok", "\(outcome)")
        #expect(outcome.responses.map(\.status) == [200, 200, 200], "\(outcome)")
        #expect(outcome.responses.map { $0.json["target"] as? String } == targets)
        #expect(outcome.ending == "open", "a persistent connection stays open")
        let requests = bed.originRequests()
        #expect(requests.map(\.target) == targets)
        #expect(Set(requests.map(\.conn)) == [1], "every request on the origin's first connection: \(requests.map(\.conn))")
    }

    @Test("three requests written at once are each answered, in the order sent")
    func pipelined() throws {
        let targets = ["/pipe-1", "/pipe-2", "/pipe-3"]
        let outcome = try bed.client(["--pipeline-requests"] + targets.flatMap { ["--request", Self.get($0)] })
        #expect(outcome.responses.map(\.status) == [200, 200, 200], "\(outcome)")
        #expect(outcome.responses.map { $0.json["target"] as? String } == targets)
        #expect(outcome.responses.map { $0.json["seq"] as? Int } == [1, 2, 3])
        #expect(outcome.unexpected == nil)
    }

    @Test("Connection: close ends the tunnel after its response; a request pipelined behind it is never sent upstream")
    func connectionClose() throws {
        let outcome = try bed.client(["--pipeline-requests", "--request", Self.get("/before"),
                                      "--request", Self.get("/closing", closing: true), "--request", Self.get("/after")])
        #expect(outcome.responses.map(\.status) == [200, 200], "\(outcome)")
        #expect(outcome.responses.last?.head.lowercased().contains("\r\nconnection: close") == true, "\(outcome.responses.last?.head ?? "")")
        #expect(outcome.ending == "closed", "\(outcome)")
        #expect(outcome.unexpected == nil)
        #expect(bed.originRequests().map(\.target) == ["/before", "/closing"])
        let census = bed.census(pooled: 1)
        #expect(census.clientSessions == 0, "\(census)")
    }

    @Test("a request inside the tunnel for another host is refused with 421 and never sent upstream (RFC 9110 §15.5.20)")
    func otherHostInside() throws {
        let outcome = try bed.client(["--request", "GET /elsewhere HTTP/1.1\nHost: other.example.com\n\n"])
        #expect(outcome.responses.map(\.status) == [421], "\(outcome)")
        #expect(outcome.ending == "closed")
        #expect(bed.originHeads().isEmpty)
    }
}

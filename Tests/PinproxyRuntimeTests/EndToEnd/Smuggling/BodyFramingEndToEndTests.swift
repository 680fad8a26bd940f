import Foundation
import Testing
@testable import PinproxyRuntime

extension DesyncSuites {
    /// SPEC §3's promises about request bodies, end to end against the recording
    /// origin: what is refused before anything goes upstream, what aborts an
    /// upstream connection, and the expectation addressed to pinproxy.
    @Suite("Request body framing end to end")
    struct BodyFramingEndToEndTests {
        @Test("an invalid chunk-size line that arrived with the head: 400, and no upstream connection is even made")
        func invalidChunkWithHead() throws {
            let bed = SmugglingBed.shared
            let marker = "/early-\(bed.nextNumber())"
            let connectionsBefore = bed.origin.events().map(\.conn).max() ?? 0
            let responses = try bed.send(Array(("POST http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\n"
                + "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n").utf8))
            #expect(responses.map(\.status) == [400])
            #expect(bed.origin.events().filter { ($0.target ?? "").contains(marker) }.isEmpty)
            // No fresh connection either (the pooled one, if any, was not taken).
            #expect(bed.origin.events().filter { $0.conn > connectionsBefore }.isEmpty)
        }

        @Test("a framing error found after the head went upstream aborts that connection: it is never pooled again")
        func invalidChunkLater() throws {
            let bed = SmugglingBed.shared
            let marker = "/late-\(bed.nextNumber())"
            let client = try RawClient(port: bed.proxy.forwardPort)
            client.send("POST http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
            // The head (and the first chunk) are upstream before the bad line exists.
            #expect(eventually { bed.origin.events().contains { $0.event == "head" && $0.target == marker } })
            let conn = try #require(bed.origin.events().first { $0.event == "head" && $0.target == marker }?.conn)
            client.send("5;\u{1}\r\nworld\r\n0\r\n\r\n")
            var pending: [UInt8] = []
            let answer = RawHTTPResponse.read(from: client, pending: &pending)
            #expect(answer?.status == 400)
            #expect(eventually { bed.origin.events().contains { $0.event == "closed" && $0.conn == conn } },
                    "pinproxy kept the upstream connection open after a framing error")
            #expect(bed.origin.requests(containing: marker).isEmpty, "the origin read a complete request")
            let next = try bed.get("/after-late-\(bed.nextNumber())")
            #expect(next?.status == 200)
            #expect(SmugglingBed.connection(of: next) != conn)
        }

        @Test("Connection: expect makes pinproxy answer 100-continue itself, and the expectation is not forwarded")
        func expectationForProxy() throws {
            let bed = SmugglingBed.shared
            let marker = "/expect-\(bed.nextNumber())"
            let client = try RawClient(port: bed.proxy.forwardPort)
            client.send("POST http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\nConnection: expect\r\n"
                + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let (interim, _) = client.read(upTo: 25, timeout: 5)
            #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
            client.send("hello")
            var pending: [UInt8] = []
            let answer = try #require(RawHTTPResponse.read(from: client, pending: &pending))
            #expect(answer.status == 200)
            #expect(answer.json["body_length"] as? Int == 5)
            let fields = bed.origin.requests(containing: marker).first?.fields ?? []
            #expect(!fields.contains("expect"))
        }

        @Test("an ordinary Expect: 100-continue is forwarded and the origin's answer decides")
        func expectationForwarded() throws {
            let bed = SmugglingBed.shared
            let marker = "/expect-fwd-\(bed.nextNumber())"
            let responses = try bed.send(Array(("POST http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\n"
                + "Expect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello").utf8))
            #expect(responses.map(\.status) == [200])
            #expect((bed.origin.requests(containing: marker).first?.fields ?? []).contains("expect"))
        }

        @Test("framing-field aliases with '_' are refused with 400 before anything goes upstream", arguments: [
            "Content_Length: 5", "content_length: 5", "CONTENT_LENGTH: 5", "Transfer_Encoding: chunked", "transfer_encoding: x",
        ])
        func underscoreAliases(field: String) throws {
            let bed = SmugglingBed.shared
            let marker = "/alias-\(bed.nextNumber())"
            let responses = try bed.send(Array(("POST http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\n"
                + "\(field)\r\n\r\nhello").utf8))
            #expect(responses.map(\.status) == [400])
            #expect(bed.origin.events().filter { ($0.target ?? "").contains(marker) }.isEmpty)
        }

        @Test("a final transfer coding other than chunked is 400; a coding before chunked is 501", arguments: [
            ("gzip", 400), ("chunked, gzip", 400), ("identity", 400), ("gzip, chunked", 501), ("deflate, chunked", 501),
        ])
        func transferCodings(coding: String, status: Int) throws {
            let bed = SmugglingBed.shared
            let marker = "/coding-\(bed.nextNumber())"
            let responses = try bed.send(Array(("POST http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\n"
                + "Transfer-Encoding: \(coding)\r\n\r\n0\r\n\r\n").utf8))
            #expect(responses.map(\.status) == [status])
            #expect(bed.origin.events().filter { ($0.target ?? "").contains(marker) }.isEmpty)
        }
    }
}

import Foundation
import Testing
@testable import PinproxyRuntime

extension DesyncSuites {
    /// Issue 12's hole, as a class: client A names a field in a `Connection`
    /// option and sends a body that holds a whole second request; the upstream
    /// connection, pooled, then serves client B. For every name an option can
    /// nominate, the origin must read exactly A's one message with its whole body,
    /// never the request inside it, and B must get its own answer over the same
    /// upstream connection.
    @Suite("Connection options never smuggle a request into a pooled connection")
    struct ConnectionOptionSmugglingTests {
        static let names = [
            "Content-Length", "content-length", "CONTENT-LENGTH", "Transfer-Encoding", "transfer-encoding",
            "TrAnSfEr-EnCoDiNg", "Host", "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Upgrade",
            "Proxy-Authorization", "Via", "Expect", "Date", "X-Arbitrary", "keep-alive",
        ]

        enum Framing: String, CaseIterable, Sendable { case contentLength, chunked, none }

        struct Case: Sendable, CustomTestStringConvertible {
            var nominated: String
            var spelling: Int
            var framing: Framing
            var gateway: Bool
            var testDescription: String { "\(nominated) (spelling \(spelling), \(framing)\(gateway ? ", gateway" : ""))" }

            /// One option, an option late in a list, and a second Connection field.
            var connectionLines: String {
                switch spelling {
                case 0: "Connection: \(nominated)\r\n"
                case 1: "Connection: keep-alive, x-other,\(nominated)\r\n"
                default: "Connection: keep-alive\r\nConnection: \(nominated)\r\n"
                }
            }
        }

        static let cases: [Case] = names.flatMap { name in
            (0..<3).flatMap { spelling in
                Framing.allCases.map { Case(nominated: name, spelling: spelling, framing: $0, gateway: false) }
            }
        } + names.map { Case(nominated: $0, spelling: 0, framing: .contentLength, gateway: true) }

        @Test("A's body reaches the origin as A's body, and B gets its own answer over the same connection", arguments: cases)
        func nominatedField(_ testCase: Case) throws {
            let bed = SmugglingBed.shared
            let number = bed.nextNumber()
            let smuggled = "GET /smuggled-\(number) HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
            var framingLines = ""
            var body = ""
            switch testCase.framing {
            case .contentLength:
                framingLines = "Content-Length: \(smuggled.utf8.count)\r\n"
                body = smuggled
            case .chunked:
                framingLines = "Transfer-Encoding: chunked\r\n"
                body = String(smuggled.utf8.count, radix: 16) + "\r\n" + smuggled + "\r\n0\r\n\r\n"
            case .none:
                break
            }
            let target = testCase.gateway ? "/a-\(number)" : "http://api.example.com/a-\(number)"
            let request = "POST \(target) HTTP/1.1\r\nHost: api.example.com\r\n" + testCase.connectionLines
                + framingLines + "\r\n" + body
            let port = testCase.gateway ? bed.proxy.gatewayPort : bed.proxy.forwardPort
            let answers = try bed.send(Array(request.utf8), port: port, count: 1)
            let first = try #require(answers.first, "no answer for A")
            #expect(first.status == 200)
            #expect(first.json["target"] as? String == "/a-\(number)")
            #expect(first.json["body_length"] as? Int == (testCase.framing == .none ? 0 : smuggled.utf8.count))

            let canary = try bed.get("/b-\(number)")
            #expect(canary?.json["target"] as? String == "/b-\(number)",
                    "B got \(canary?.bodyText ?? "nothing"); the origin read B \(bed.origin.requests(containing: "/b-\(number)").count) time(s)")
            #expect(SmugglingBed.connection(of: canary) == SmugglingBed.connection(of: first),
                    "B did not reuse A's upstream connection: the pool retired it")
            #expect(bed.origin.requests(containing: "/smuggled-\(number)").isEmpty, "the origin read the smuggled request")
            let recorded = bed.origin.requests(containing: "/a-\(number)")
            #expect(recorded.count == 1)
            if !["content-length", "transfer-encoding", "host", "connection", "via"].contains(testCase.nominated.lowercased()) {
                let forwarded = recorded.first?.fields ?? []
                #expect(!forwarded.contains(testCase.nominated.lowercased()), "the nominated field was forwarded: \(forwarded)")
            }
        }

        /// Responses the origin sends with `Connection: <name>`, for names that
        /// would strip the framing of a relayed response.
        static let responseCases: [(name: String, chunked: Bool)] = ["Content-Length", "content-length", "Transfer-Encoding",
            "X-Origin-Connection", "Date"].flatMap { [($0, false), ($0, true)] }

        @Test("a response naming its framing field in Connection still reaches the client framed, on a kept-alive connection",
              arguments: responseCases)
        func nominatingResponse(name: String, chunked: Bool) throws {
            let bed = SmugglingBed.shared
            let number = bed.nextNumber()
            let path = "/respond/\(chunked ? "chunked-nominating" : "nominating")/\(name)"
            let client = try RawClient(port: bed.proxy.forwardPort)
            client.send("GET http://api.example.com\(path) HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
                + "GET http://api.example.com/after-\(number) HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
            var pending: [UInt8] = []
            let first = try #require(RawHTTPResponse.read(from: client, pending: &pending))
            #expect(first.status == 200)
            #expect(first.values("content-length").count + first.values("transfer-encoding").count == 1)
            #expect(first.json["target"] as? String == path)
            #expect(first.values("connection").isEmpty)
            let second = try #require(RawHTTPResponse.read(from: client, pending: &pending), "the connection did not stay usable")
            #expect(second.json["target"] as? String == "/after-\(number)")
        }
    }
}

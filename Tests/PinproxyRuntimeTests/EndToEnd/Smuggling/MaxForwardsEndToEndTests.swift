import Foundation
import Testing
@testable import PinproxyRuntime

extension DesyncSuites {
    /// RFC 9110 §7.6.2 and RFC 9112 §3.2.4 through the daemon, with curl: a
    /// TRACE or OPTIONS with `Max-Forwards: 0` is answered by pinproxy and
    /// never reaches the origin; above zero the origin reads one less; a
    /// server-wide OPTIONS reaches it as `OPTIONS *`.
    @Suite("Max-Forwards and server-wide OPTIONS, end to end")
    struct MaxForwardsEndToEndTests {
        /// curl's arguments for `url` through the forward listener, or straight to the gateway.
        static func through(_ gateway: Bool, _ bed: SmugglingBed, path: String) -> [String] {
            gateway ? ["http://127.0.0.1:\(bed.proxy.gatewayPort)\(path)"]
                : ["-x", bed.proxy.forwardProxy, "http://api.example.com\(path)"]
        }

        @Test("TRACE at zero: pinproxy reflects it, without its credentials, and the origin sees nothing",
              arguments: [false, true])
        func traceAnsweredHere(gateway: Bool) throws {
            let bed = SmugglingBed.shared
            let marker = "trace-here-\(bed.nextNumber())"
            let result = try Curl.run(["-X", "TRACE", "-H", "Max-Forwards: 0", "-H", "Cookie: session=secret-\(marker)",
                                       "-H", "Authorization: Bearer secret-\(marker)", "-H", "X-Case: \(marker)"]
                                      + Self.through(gateway, bed, path: "/\(marker)"))
            #expect(result.exitCode == 0 && result.status == 200)
            #expect(result.header("Content-Type") == "message/http")
            #expect(result.header("Proxy-Status") == "pinproxy")
            #expect(result.bodyText.hasPrefix("TRACE "))
            #expect(result.bodyText.contains("/\(marker) HTTP/1.1\r\n"))
            #expect(result.bodyText.contains("X-Case: \(marker)\r\n"))
            #expect(!result.bodyText.contains("secret"), "\(result.bodyText)")
            #expect(bed.origin.requests(containing: marker).isEmpty)
        }

        @Test("OPTIONS at zero: an empty 200 from pinproxy, nothing upstream", arguments: [false, true])
        func optionsAnsweredHere(gateway: Bool) throws {
            let bed = SmugglingBed.shared
            let marker = "options-here-\(bed.nextNumber())"
            let result = try Curl.run(["-X", "OPTIONS", "-H", "Max-Forwards: 0"] + Self.through(gateway, bed, path: "/\(marker)"))
            #expect(result.exitCode == 0 && result.status == 200 && result.body.isEmpty)
            #expect(result.header("Proxy-Status") == "pinproxy")
            #expect(bed.origin.requests(containing: marker).isEmpty)
        }

        @Test("above zero the origin reads one less, and only that", arguments: [false, true], ["TRACE", "OPTIONS"])
        func forwardedWithOneLess(gateway: Bool, method: String) throws {
            let bed = SmugglingBed.shared
            let marker = "forwarded-\(bed.nextNumber())"
            let result = try Curl.run(["-X", method, "-H", "max-forwards: 7"] + Self.through(gateway, bed, path: "/\(marker)"))
            #expect(result.status == 200)
            let request = try #require(bed.origin.requests(containing: marker).first)
            #expect(request.method == method)
            #expect(request.fields?.filter { $0 == "max-forwards" }.count == 1)
            let raw = String(decoding: bed.origin.rawBytes(of: request.conn), as: UTF8.self)
            #expect(raw.contains("/\(marker) HTTP/1.1\r\n") && raw.contains("Max-Forwards: 6\r\n"))
            #expect(!raw.contains("max-forwards: 7"))
        }

        @Test("a GET's Max-Forwards reaches the origin untouched, even at zero")
        func getUntouched() throws {
            let bed = SmugglingBed.shared
            let marker = "get-\(bed.nextNumber())"
            let result = try Curl.run(["-H", "Max-Forwards: 0"] + Self.through(false, bed, path: "/\(marker)"))
            #expect(result.status == 200)
            let request = try #require(bed.origin.requests(containing: marker).first)
            #expect(String(decoding: bed.origin.rawBytes(of: request.conn), as: UTF8.self).contains("Max-Forwards: 0\r\n"))
        }

        /// The start line of the head that carries `marker` among the bytes the origin read, on any connection.
        static func startLine(ofHeadWith marker: String, _ bed: SmugglingBed) -> String? {
            for conn in Set(bed.origin.events().map(\.conn)) {
                let raw = String(decoding: bed.origin.rawBytes(of: conn), as: UTF8.self)
                guard let found = raw.range(of: marker + "\r\n") else { continue }
                let head = raw[..<found.lowerBound]
                let start = head.range(of: "\r\n\r\n", options: .backwards)?.upperBound ?? head.startIndex
                return head[start...].components(separatedBy: "\r\n").first
            }
            return nil
        }

        /// curl sends `OPTIONS *` through the proxy with `--request-target`; an
        /// absolute-form URI without a path, which curl never sends, goes in raw bytes.
        @Test("a server-wide OPTIONS reaches the origin as OPTIONS *", arguments: [
            "curl forward", "curl gateway", "absolute-form without path",
        ])
        func serverWide(form: String) throws {
            let bed = SmugglingBed.shared
            let marker = "X-Server-Wide: \(bed.nextNumber())"
            switch form {
            case "absolute-form without path":
                let head = "OPTIONS http://api.example.com HTTP/1.1\r\nHost: api.example.com\r\n\(marker)\r\n\r\n"
                #expect(try bed.send(Array(head.utf8), count: 1).first?.status == 200)
            default:
                let result = try Curl.run(["-X", "OPTIONS", "--request-target", "*", "-H", marker]
                                          + Self.through(form == "curl gateway", bed, path: "/"))
                #expect(result.status == 200)
            }
            #expect(eventually({ Self.startLine(ofHeadWith: marker, bed) }, until: { $0 != nil }) == "OPTIONS * HTTP/1.1")
        }
    }
}

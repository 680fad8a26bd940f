import Testing
@testable import PinproxyCore

/// The request-smuggling seeds of `Fuzz/Corpus/FuzzRequestHead` (written by
/// `Fuzz/make-seeds.py`), as bytes, with the exact outcome SPEC §3 requires:
/// 400 for ambiguous or invalid framing (a final coding other than chunked
/// among them), 501 for a coding before chunked, and the framing the parser
/// settles on when the message is valid.
/// They pin down what the fuzzer starts from, so a change that makes a seed
/// pass as something else is caught by `make test`, not only by `make fuzz`.
@Suite("Fuzz seeds: request smuggling payloads")
struct SmugglingSeedTests {
    static let host = "Host: api.example.com\r\n"

    static func request(_ fields: String, body: String = "", start: String = "POST / HTTP/1.1") -> [UInt8] {
        Array((start + "\r\n" + host + fields + "\r\n" + body).utf8)
    }

    /// "400", "501", or the framing of a complete head.
    static func outcome(_ bytes: [UInt8], limits: HeadLimits = HeadLimits()) -> String {
        switch HTTPTestSupport.parseRequest(bytes, limits: limits) {
        case .incomplete: "incomplete"
        case .invalid(let error): "\(error.status)"
        case .complete(let head, _):
            switch head.bodyFraming {
            case .none: "no body"
            case .contentLength(let length): "length \(length)"
            case .chunked: "chunked"
            case .untilClose: "until close"
            }
        }
    }

    @Test("smuggling payloads are refused or framed exactly as SPEC §3 says", arguments: [
        ("CL.TE", request("Content-Length: 13\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\nSMUGGLED"), "400"),
        ("TE.CL", request("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", body: "8\r\nSMUGGLED\r\n0\r\n\r\n"), "400"),
        ("TE xchunked", request("Transfer-Encoding: xchunked\r\n"), "400"),
        ("TE with a space before the name", request(" Transfer-Encoding: chunked\r\n"), "400"),
        ("TE with a space before the colon", request("Transfer-Encoding : chunked\r\n"), "400"),
        ("TE chunked<TAB> (OWS, still chunked)", request("Transfer-Encoding: chunked\t\r\n"), "chunked"),
        ("TE <VT>chunked", request("Transfer-Encoding: \u{0B}chunked\r\n"), "400"),
        ("TE duplicated", request("Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n"), "400"),
        ("TE identity, chunked", request("Transfer-Encoding: identity, chunked\r\n"), "501"),
        ("TE chunked, chunked", request("Transfer-Encoding: chunked, chunked\r\n"), "400"),
        ("TE chunked, gzip", request("Transfer-Encoding: chunked, gzip\r\n"), "400"),
        ("TE quoted", request("Transfer-Encoding: \"chunked\"\r\n"), "400"),
        ("TE chunked;q=1", request("Transfer-Encoding: chunked;q=1\r\n"), "400"),
        ("TE obs-fold", request("Transfer-Encoding:\r\n chunked\r\n"), "400"),
        ("TE upper case", request("TRANSFER-ENCODING: CHUNKED\r\n"), "chunked"),
        ("TE in HTTP/1.0", request("Transfer-Encoding: chunked\r\n", start: "POST / HTTP/1.0"), "400"),
        ("CL +5", request("Content-Length: +5\r\n"), "400"),
        ("CL -1", request("Content-Length: -1\r\n"), "400"),
        ("CL 0005", request("Content-Length: 0005\r\n"), "length 5"),
        ("CL 1 2", request("Content-Length: 1 2\r\n"), "400"),
        ("CL 5, 5", request("Content-Length: 5, 5\r\n"), "length 5"),
        ("CL 5, 6", request("Content-Length: 5, 6\r\n"), "400"),
        ("CL 5 and CL 6", request("Content-Length: 5\r\nContent-Length: 6\r\n"), "400"),
        ("CL 5,,5", request("Content-Length: 5,,5\r\n"), "400"),
        ("CL 2^64", request("Content-Length: 18446744073709551616\r\n"), "400"),
        ("CL 2^64-1", request("Content-Length: 18446744073709551615\r\n"), "length 18446744073709551615"),
        ("CL 0x10", request("Content-Length: 0x10\r\n"), "400"),
        ("bare LF", Array("GET / HTTP/1.1\nHost: api.example.com\n\n".utf8), "400"),
        ("bare CR", Array("GET / HTTP/1.1\rHost: api.example.com\r\n\r\n".utf8), "400"),
        ("NUL in a value", request("X-A: a\u{0}b\r\n"), "400"),
        ("NUL in a name", request("X\u{0}A: b\r\n"), "400"),
        ("DEL in a value", request("X-A: a\u{7F}b\r\n"), "400"),
        ("obs-text in a value", [UInt8]("GET / HTTP/1.1\r\nX-A: caf".utf8) + [0xE9, 0x20, 0xFF, 0x80] + Array("\r\n\r\n".utf8), "no body"),
    ])
    func smugglingPayload(name: String, bytes: [UInt8], expected: String) {
        #expect(Self.outcome(bytes) == expected, "\(name)")
    }

    @Test("an empty Content-Length value is refused (RFC 9110 §8.6: 1*DIGIT)")
    func emptyContentLength() {
        #expect(Self.outcome(Self.request("Content-Length:\r\n")) == "400")
    }

    @Test("long lines meet 414 and 431 at the limits the fuzzer also uses")
    func longLines() {
        let limits = HeadLimits(maxHeaderBytes: 600, maxTargetBytes: 96)
        let longTarget = Array(("GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\n\r\n").utf8)
        #expect(Self.outcome(longTarget, limits: limits) == "414")
        let longField = Self.request("X-Long: " + String(repeating: "b", count: 700) + "\r\n", start: "GET / HTTP/1.1")
        #expect(Self.outcome(longField, limits: limits) == "431")
    }
}

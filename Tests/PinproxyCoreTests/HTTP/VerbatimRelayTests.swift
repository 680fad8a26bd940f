import Foundation
import Testing
@testable import PinproxyCore

/// The relay copies runs of received field lines that are already in the
/// writers' form ("name: value" CRLF) in one piece, and the scanner judges a
/// value eight bytes at a time. Both are shortcuts: these tests hold them to
/// the line-by-line rules, for every position a shortcut could get wrong.
@Suite("Verbatim relay of field lines and the word-at-a-time value scan")
struct VerbatimRelayTests {
    /// The fixed hop-by-hop set and the framing fields, which no writer copies.
    static let neverCopied: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade", "proxy-authorization",
        "content-length", "transfer-encoding",
    ]

    /// The field lines a client must get for `head`, built field by field from
    /// the String view: the rules of SPEC §3 without any of the writer's code.
    static func expectedFieldLines(_ head: HTTPResponseHead) -> String {
        let nominated = Set(head.fields.filter { $0.name.lowercased() == "connection" }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        return head.fields.filter { !neverCopied.contains($0.name.lowercased()) && !nominated.contains($0.name.lowercased()) }
            .map { "\($0.name): \($0.value)\r\n" }.joined()
    }

    /// Spellings of one field line: verbatim, and the forms that are not
    /// (no space, a tab, extra or trailing OWS, an empty value both ways).
    static let spellings: [@Sendable (String, String) -> String] = [
        { "\($0): \($1)\r\n" }, { "\($0):\($1)\r\n" }, { "\($0):\t\($1)\r\n" }, { "\($0):  \($1) \r\n" },
        { "\($0): \($1)\t\r\n" },
    ]
    static let names = ["X-A", "Server", "Connection", "Keep-Alive", "Close", "x-hop", "Content-Length", "ETag", "Via"]

    @Test("every mix of verbatim, reformatted and removed lines is relayed as the line-by-line rules say")
    func mixedLinesMatchTheRules() throws {
        var generator = SeededGenerator(seed: 0x5EED_17)
        var parsed = 0
        for round in 0..<2_000 {
            var raw = "HTTP/1.1 200 OK\r\n"
            for field in 0..<Int.random(in: 0...9, using: &generator) {
                let name = Self.names.randomElement(using: &generator)!
                let value: String
                switch name {
                case "Connection": value = ["keep-alive", "close", "X-Hop, keep-alive", "close, Close", "ETag"]
                    .randomElement(using: &generator)!
                case "Content-Length": value = "4"
                default: value = ["", "v\(field)", "a b", "12345678901234567"].randomElement(using: &generator)!
                }
                // An empty value has no verbatim form with OWS after it.
                raw += (value.isEmpty ? Self.spellings[0] : Self.spellings.randomElement(using: &generator)!)(name, value)
            }
            raw += "\r\n"
            guard let head = HTTPTestSupport.responseHead(raw) else { Issue.record("not parsed: \(raw.debugDescription)"); continue }
            parsed += 1
            let relayed = HTTPTestSupport.text(ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true))
            let framing = head.bodyFraming == .contentLength(4) ? "Content-Length: 4\r\nVia: 1.1 pinproxy\r\n"
                : "Via: 1.1 pinproxy\r\nConnection: close\r\n"
            let expected = "HTTP/1.1 200 OK\r\n" + Self.expectedFieldLines(head) + framing + "\r\n"
            #expect(relayed == expected, "round \(round): \(raw.debugDescription)")
        }
        #expect(parsed == 2_000)
    }

    @Test("a control byte or DEL anywhere in a value is refused, at every offset of the eight-byte words")
    func controlBytesAtEveryOffset() {
        let refused: [UInt8] = Array(0x00...0x08) + Array(0x0B...0x0C) + Array(0x0E...0x1F) + [0x7F]
        for offset in 0..<19 {
            for byte in refused {
                var value = Array(repeating: UInt8(ascii: "v"), count: 19)
                value[offset] = byte
                let raw = Array("HTTP/1.1 200 OK\r\nX-Value: ".utf8) + value + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
                let result = raw.withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits()) }
                #expect(HTTPTestSupport.status(result) == 502, "byte \(byte) at \(offset)")
            }
        }
    }

    @Test("bare CR and bare LF in a value are refused at every offset")
    func bareLineEndsAtEveryOffset() {
        for offset in 0..<19 {
            for (byte, reason) in [(HTTPSyntax.lf, "bare lf in field section"), (HTTPSyntax.cr, "bare cr in field value")] {
                var value = Array(repeating: UInt8(ascii: "v"), count: 19)
                value[offset] = byte
                let raw = Array("HTTP/1.1 200 OK\r\nX-Value: w".utf8) + value + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
                let result = raw.withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits()) }
                guard case .invalid(let error) = result else { Issue.record("accepted \(byte) at \(offset)"); continue }
                #expect(error.reason == reason, "byte \(byte) at \(offset)")
            }
        }
    }

    @Test("HTAB, obs-text and every printable byte pass at every offset and are relayed byte for byte")
    func allowedBytesAtEveryOffset() throws {
        let allowed: [UInt8] = [HTTPSyntax.tab, 0x20, 0x21, 0x7E, 0x80, 0xC3, 0xFF]
        for offset in 1..<18 {
            for byte in allowed {
                var value = Array(repeating: UInt8(ascii: "v"), count: 19)
                value[offset] = byte
                let raw = Array("HTTP/1.1 200 OK\r\nX-Value: ".utf8) + value + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
                let result = raw.withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits()) }
                guard case .complete(let head, let consumed) = result else {
                    Issue.record("refused \(byte) at \(offset): \(result)")
                    continue
                }
                #expect(consumed == raw.count)
                let relayed = ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true)
                let expected = Array("HTTP/1.1 200 OK\r\nX-Value: ".utf8) + value
                    + Array("\r\nContent-Length: 0\r\nVia: 1.1 pinproxy\r\n\r\n".utf8)
                #expect(relayed == expected, "byte \(byte) at \(offset)")
            }
        }
    }

    @Test("a head cut anywhere inside a long value is incomplete, never complete or refused")
    func cutInsideLongValue() {
        let raw = Array("HTTP/1.1 200 OK\r\nX-Long: \(String(repeating: "abcdefgh", count: 5))\r\n\r\n".utf8)
        for length in 0..<raw.count {
            let result = raw[..<length].withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits()) }
            guard case .incomplete = result else { Issue.record("cut at \(length): \(result)"); continue }
        }
    }
}

/// A deterministic generator (SplitMix64), so a failing round can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

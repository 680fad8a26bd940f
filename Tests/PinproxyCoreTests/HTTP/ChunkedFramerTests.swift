import Testing
@testable import PinproxyCore

/// A chunked body and what the framer must make of it.
struct ChunkedCase: Sendable, CustomTestStringConvertible {
    var name: String
    var body: String
    /// The normalised bytes written downstream, or nil when the body is invalid.
    var normalised: String?
    /// Bytes after the body that must stay unconsumed (pipelining).
    var leftover = ""
    var testDescription: String { name }
}

/// Plays the runtime: feeds the framer pieces of a body and moves data itself.
struct ChunkedDriver {
    enum Outcome: Equatable {
        case finished(output: String, leftover: String)
        case invalid(HTTPError)
        case starved
    }

    /// Feeds `pieces` one after another, calling `next` until it needs more.
    static func run(_ pieces: [[UInt8]]) -> Outcome {
        var framer = ChunkedFramer()
        var buffer: [UInt8] = []
        var output: [UInt8] = []
        var remainingPieces = pieces[...]
        while true {
            let step = buffer.withUnsafeBytes { framer.next($0) }
            switch step {
            case .needMore:
                guard let piece = remainingPieces.popFirst() else { return .starved }
                buffer += piece
            case .control(let consumed, let emit):
                output += emit
                buffer.removeFirst(consumed)
            case .data(let remaining):
                if buffer.isEmpty {
                    guard let piece = remainingPieces.popFirst() else { return .starved }
                    buffer += piece
                    continue
                }
                let count = min(Int(remaining), buffer.count)
                output += buffer.prefix(count)
                buffer.removeFirst(count)
                framer.didPassData(UInt64(count))
            case .done(let consumed, let emit):
                output += emit
                buffer.removeFirst(consumed)
                #expect(framer.isDone)
                let rest = buffer + remainingPieces.flatMap { $0 }
                return .finished(output: HTTPTestSupport.text(output), leftover: HTTPTestSupport.text(rest))
            case .invalid(let error):
                return .invalid(error)
            }
        }
    }
}

@Suite("ChunkedFramer")
struct ChunkedFramerTests {
    static let cases: [ChunkedCase] = [
        ChunkedCase(name: "one chunk", body: "5\r\nhello\r\n0\r\n\r\n", normalised: "5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "upper-case hex is lowered", body: "A\r\n0123456789\r\n0\r\n\r\n", normalised: "a\r\n0123456789\r\n0\r\n\r\n"),
        ChunkedCase(name: "leading zeros dropped", body: "0005\r\nhello\r\n000\r\n\r\n", normalised: "5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "extensions dropped", body: "5;name=value;flag\r\nhello\r\n0;last\r\n\r\n", normalised: "5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "quoted extension with escapes", body: "5 ; a = \"b \\\" ;c\"\r\nhello\r\n0\r\n\r\n",
                    normalised: "5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "trailers dropped", body: "5\r\nhello\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", normalised: "5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "two chunks with CRLF inside data", body: "2\r\n\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                    normalised: "2\r\n\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        ChunkedCase(name: "empty body", body: "0\r\n\r\n", normalised: "0\r\n\r\n"),
        ChunkedCase(name: "pipelined bytes stay", body: "1\r\nx\r\n0\r\n\r\nGET / HTTP/1.1\r\n", normalised: "1\r\nx\r\n0\r\n\r\n",
                    leftover: "GET / HTTP/1.1\r\n"),
        ChunkedCase(name: "bad hex", body: "g\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "empty size", body: "\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "negative size", body: "-5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "0x prefix", body: "0x5\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "bare LF after size", body: "5\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "bare CR after size", body: "5\rhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "data longer than its size", body: "5\r\nhelloX\r\n0\r\n\r\n"),
        ChunkedCase(name: "bare LF after data", body: "5\r\nhello\n0\r\n\r\n"),
        ChunkedCase(name: "17 hex digits", body: "00000000000000005\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "size of 2^63", body: "8000000000000000\r\n"),
        ChunkedCase(name: "size of 2^64-1", body: "FFFFFFFFFFFFFFFF\r\n"),
        ChunkedCase(name: "whitespace before CRLF", body: "5 \r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "empty extension name", body: "5;\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "extension without value", body: "5;a=\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "unterminated quoted extension", body: "5;a=\"x\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "obs-fold in trailer", body: "0\r\nX: 1\r\n 2\r\n\r\n"),
        ChunkedCase(name: "invalid trailer name", body: "0\r\nX Y: 1\r\n\r\n"),
        ChunkedCase(name: "bare LF ending trailers", body: "0\r\nX: 1\r\n\n"),
        ChunkedCase(name: "control line too long", body: "5;" + String(repeating: "a", count: 5000) + "\r\nhello\r\n0\r\n\r\n"),
        ChunkedCase(name: "trailer section too large", body: "0\r\nX: " + String(repeating: "a", count: 9000) + "\r\n\r\n"),
    ]

    private static func expected(_ testCase: ChunkedCase) -> ChunkedDriver.Outcome? {
        testCase.normalised.map { .finished(output: $0, leftover: testCase.leftover) }
    }

    private static func check(_ outcome: ChunkedDriver.Outcome, _ testCase: ChunkedCase, _ note: String) {
        if let expected = expected(testCase) {
            #expect(outcome == expected, "\(note)")
        } else if case .invalid(let error) = outcome {
            #expect(error.status == 400, "\(note)")
        } else {
            Issue.record("expected invalid, got \(outcome) (\(note))")
        }
    }

    @Test("a chunked body fed at once is normalised or refused with 400", arguments: cases)
    func wholeBody(_ testCase: ChunkedCase) {
        Self.check(ChunkedDriver.run([Array(testCase.body.utf8)]), testCase, "whole")
    }

    @Test("splitting the body at any byte boundary gives the same outcome", arguments: cases.filter { $0.body.utf8.count < 200 })
    func everySplit(_ testCase: ChunkedCase) {
        let bytes = Array(testCase.body.utf8)
        for split in 1..<bytes.count {
            Self.check(ChunkedDriver.run([Array(bytes[..<split]), Array(bytes[split...])]), testCase, "split at \(split)")
        }
        Self.check(ChunkedDriver.run(bytes.map { [$0] }), testCase, "one byte at a time")
    }

    @Test("an incomplete size line needs more bytes and is not consumed")
    func needMore() {
        var framer = ChunkedFramer()
        let step = Array("1a;x=y".utf8).withUnsafeBytes { framer.next($0) }
        #expect(step == .needMore)
        #expect(!framer.isDone)
    }

    @Test("the framer reports the remaining data until the runtime has moved it all")
    func dataSteps() {
        var framer = ChunkedFramer()
        let size = Array("10\r\n".utf8).withUnsafeBytes { framer.next($0) }
        #expect(size == .control(consumed: 4, emit: Array("10\r\n".utf8)))
        #expect([UInt8]().withUnsafeBytes { framer.next($0) } == .data(remaining: 16))
        framer.didPassData(10)
        #expect([UInt8]().withUnsafeBytes { framer.next($0) } == .data(remaining: 6))
        framer.didPassData(6)
        #expect([UInt8]().withUnsafeBytes { framer.next($0) } == .needMore)
    }

    @Test("after an invalid step the framer keeps returning the same error")
    func stickyError() {
        var framer = ChunkedFramer()
        let first = Array("z\r\n".utf8).withUnsafeBytes { framer.next($0) }
        let second = Array("5\r\n".utf8).withUnsafeBytes { framer.next($0) }
        #expect(first == .invalid(HTTPError(status: 400, reason: "invalid chunk size")))
        #expect(second == first)
    }

    @Test("the largest size that fits in Int64 is accepted")
    func largestSize() {
        var framer = ChunkedFramer()
        let step = Array("7fffffffffffffff\r\n".utf8).withUnsafeBytes { framer.next($0) }
        #expect(step == .control(consumed: 18, emit: Array("7fffffffffffffff\r\n".utf8)))
    }
}

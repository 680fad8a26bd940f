import Testing
@testable import PinproxyCore

@Suite("HeadBuffers")
struct HeadBuffersTests {
    /// Request heads of different sizes, a long one between short ones, so a
    /// reused buffer is always tried with less than it held before.
    static let requests: [String] = [
        "GET /a HTTP/1.1\r\nHost: a.example\r\nAccept: */*\r\n\r\n",
        "POST /upload HTTP/1.1\r\nHost: b.example\r\nContent-Length: 5\r\nX-Long: " + String(repeating: "v", count: 900) + "\r\n"
            + (0..<30).map { "X-F\($0): \($0)\r\n" }.joined() + "\r\n",
        "GET / HTTP/1.1\r\nHost: c.example\r\n\r\n",
        "GET /x HTTP/1.1\r\nHost: d.example\r\nConnection: close\r\n\r\n",
    ]
    static let responses: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Pad: " + String(repeating: "p", count: 300) + "\r\n\r\n",
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nServer: t\r\n\r\n",
    ]

    private static func request(_ text: String, _ buffers: inout HeadBuffers) -> HeadParseResult<HTTPRequestHead> {
        Array(text.utf8).withUnsafeBytes { RequestHeadParser.parse($0, limits: HeadLimits(), buffers: &buffers) }
    }

    private static func response(_ text: String, _ buffers: inout HeadBuffers) -> HeadParseResult<HTTPResponseHead> {
        Array(text.utf8).withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits(), buffers: &buffers) }
    }

    private static func section<Head>(_ result: HeadParseResult<Head>, _ field: (Head) -> FieldSection) -> FieldSection? {
        if case let .complete(head, _) = result { return field(head) }
        return nil
    }

    @Test("heads parsed into reused buffers equal fresh parses, in every order")
    func reuseGivesWhatAFreshParseGives() {
        var buffers = HeadBuffers()
        for round in 0..<3 {
            for (index, text) in (Self.requests + Self.requests.reversed()).enumerated() {
                let reused = Self.request(text, &buffers)
                let fresh = Array(text.utf8).withUnsafeBytes { RequestHeadParser.parse($0, limits: HeadLimits()) }
                #expect(reused == fresh, "round \(round) request \(index)")
                let answer = Self.responses[(index + round) % Self.responses.count]
                let reusedResponse = Self.response(answer, &buffers)
                let freshResponse = Array(answer.utf8).withUnsafeBytes {
                    ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits())
                }
                #expect(reusedResponse == freshResponse, "round \(round) response \(index)")
                if let section = Self.section(reusedResponse, \.fieldSection) { buffers.giveBack(section) }
                if let section = Self.section(reused, \.fieldSection) { buffers.giveBack(section) }
            }
        }
    }

    @Test("a head given back is parsed into again: the same lines and bytes, not new allocations")
    func givenBackArraysAreReused() throws {
        var buffers = HeadBuffers()
        var lines: UnsafePointer<FieldSection.Line>?
        var storage: UnsafePointer<UInt8>?
        var capacities = (lines: 0, bytes: 0)
        do {
            // Scoped: the head is gone when its arrays are taken again, as an exchange's is.
            let first = try #require(Self.section(Self.request(Self.requests[0], &buffers), \.fieldSection))
            lines = first.lines.withUnsafeBufferPointer { $0.baseAddress }
            storage = first.storage.withUnsafeBufferPointer { $0.baseAddress }
            capacities = (first.lines.capacity, first.storage.capacity)
            buffers.giveBack(first)
        }
        #expect(buffers.keptCounts == (lines: 1, bytes: 1))
        // Had the arrays been freed, these would take their memory (malloc
        // hands a freed block of the same size back first), and the parse
        // below would get other addresses.
        var decoyLines = [FieldSection.Line](); decoyLines.reserveCapacity(capacities.lines)
        var decoyBytes = [UInt8](); decoyBytes.reserveCapacity(capacities.bytes)
        defer { _ = (decoyLines, decoyBytes) }
        let second = try #require(Self.section(Self.request(Self.requests[2], &buffers), \.fieldSection))
        #expect(second.lines.withUnsafeBufferPointer { $0.baseAddress } == lines)
        #expect(second.storage.withUnsafeBufferPointer { $0.baseAddress } == storage)
        #expect(second.fields == [HTTPField(name: "Host", value: "c.example")])
        #expect(buffers.keptCounts == (lines: 0, bytes: 0))
    }

    @Test("a head still held elsewhere keeps its bytes when its arrays are taken again")
    func heldHeadIsNotOverwritten() throws {
        var buffers = HeadBuffers()
        let kept = try #require(Self.section(Self.request(Self.requests[1], &buffers), \.fieldSection))
        let before = kept.fields
        buffers.giveBack(kept)
        for text in Self.requests { _ = Self.request(text, &buffers) }
        var serialised = buffers.takeBytes(capacity: 8)
        serialised.append(contentsOf: Array(repeating: 0x41, count: 2000))
        #expect(kept.fields == before)
        #expect(kept.count == 33)
    }

    @Test("an incomplete or invalid head gives its lines back; large and surplus buffers are not kept")
    func boundsAndGiveBacks() {
        var buffers = HeadBuffers()
        _ = Self.request("GET / HTTP/1.1\r\nHost: a", &buffers)
        #expect(buffers.keptCounts == (lines: 1, bytes: 0))
        _ = Self.request("GET / HTTP/1.1\r\nHo st: a\r\n\r\n", &buffers)
        #expect(buffers.keptCounts == (lines: 1, bytes: 0))

        var large: [UInt8] = []
        large.reserveCapacity(HeadBuffers.largestKeptByteCount + 1)
        buffers.giveBack(bytes: large)
        #expect(buffers.keptCounts.bytes == 0)
        var manyLines: [FieldSection.Line] = []
        manyLines.reserveCapacity(HeadBuffers.largestKeptLineCount + 1)
        buffers.giveBack(lines: manyLines)
        #expect(buffers.keptCounts.lines == 1)

        for _ in 0..<5 {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(64)
            buffers.giveBack(bytes: bytes)
            var lines: [FieldSection.Line] = []
            lines.reserveCapacity(8)
            buffers.giveBack(lines: lines)
        }
        #expect(buffers.keptCounts == (lines: 2, bytes: 3))
        // An empty array has nothing to keep.
        let fresh = HeadBuffers()
        var emptyGiven = fresh
        emptyGiven.giveBack(bytes: [])
        #expect(emptyGiven.keptCounts == (lines: 0, bytes: 0))
    }

    @Test("a session's exchange gives its heads back to the lent buffers, an interim one too, and keeps none itself")
    func machineGivesHeadsBack() {
        var machine = SessionMachine(mode: .gateway(upstream: SessionScript.api))
        var buffers = HeadBuffers()
        var hostMemo = HostFieldMemo()
        var actions: [SessionAction] = []
        let rules = SessionScript.rules()
        for round in 0..<3 {
            let text = Self.requests[round == 1 ? 0 : 2]
            let head = Array(text.utf8).withUnsafeBytes { RequestHeadParser.parse($0, limits: HeadLimits(), buffers: &buffers) }
            machine.handle(.requestHead(head, buffered: text.utf8.count, rules: rules, draining: false), into: &actions, lending: &buffers, hostMemo: &hostMemo)
            machine.handle(.upstreamReady(pooled: true, reported: false), into: &actions, lending: &buffers, hostMemo: &hostMemo)
            if round == 1 {
                // An interim response first: its head goes back too, and its relayed copy once written.
                let hints = Array("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n".utf8).withUnsafeBytes {
                    ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits(), buffers: &buffers)
                }
                machine.handle(.responseHead(hints), into: &actions, lending: &buffers, hostMemo: &hostMemo)
                #expect(actions.contains { if case .relayInterimResponse(.some, _) = $0 { true } else { false } })
                // The request's head and its serialised copy are out; the interim head's lines and bytes are back.
                #expect(buffers.keptCounts == (lines: 1, bytes: 1))
            }
            let answer = Self.responses[2]
            let response = Array(answer.utf8).withUnsafeBytes {
                ResponseHeadParser.parse($0, requestMethod: "GET", limits: HeadLimits(), buffers: &buffers)
            }
            machine.handle(.responseHead(response), into: &actions, lending: &buffers, hostMemo: &hostMemo)
            machine.handle(.responseBody(.complete), into: &actions, lending: &buffers, hostMemo: &hostMemo)
            #expect(actions.contains { if case .nextRequest = $0 { true } else { false } }, "round \(round)")
            for action in actions {
                switch action {
                case let .sendRequestHead(bytes), let .sendResponseHead(bytes, _, _, _), let .relayInterimResponse(bytes?, _):
                    buffers.giveBack(bytes: bytes)
                default: break
                }
            }
            actions.removeAll()
            // Both heads' lines and bytes, and the serialised heads once written.
            #expect(buffers.keptCounts == (lines: 2, bytes: 3), "round \(round)")
            #expect(machine.headBuffers.keptCounts == (lines: 0, bytes: 0), "round \(round)")
        }
    }
}

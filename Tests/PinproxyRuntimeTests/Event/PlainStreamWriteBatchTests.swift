import CLibevent
import Foundation
@testable import PinproxyRuntime
import Testing

/// `PlainStream.flush` writes at the end of the loop pass, after every
/// callback epoll reported in it: the answers of one pass leave together, so
/// a client driving many connections (wrk, a browser) wakes once for several.
/// Before this, each answer left inside its own callback and woke the client
/// once per response (wrk at 128 connections: 0.77–0.91 `epoll_wait` per
/// request behind pinproxy, 0.22–0.39 behind HAProxy).
@Suite("PlainStream: the writes of a loop pass")
struct PlainStreamWriteBatchTests {
    /// Echoes what it reads; notes, at each read, how many bytes the other
    /// stream's peer had already received, and counts drain reports.
    final class Echo: ByteStreamDelegate {
        var peekAtRead: () -> Int = { 0 }
        var seenByOtherPeerAtRead: [Int] = []
        var drains = 0
        var ended: StreamEnd?
        func streamDidRead(_ stream: ByteStream) {
            seenByOtherPeerAtRead.append(peekAtRead())
            let bytes = stream.input.withContiguousPrefix(count: stream.input.count) { Array($0) }
            stream.input.drain(bytes.count)
            stream.write(bytes)
            stream.flush()
        }
        func streamDidDrain(_ stream: ByteStream) { drains += 1 }
        func stream(_ stream: ByteStream, didEnd ending: StreamEnd) { ended = ending }
    }

    /// A socket pair: [0] is the test's peer (blocking), [1] the stream's (non-blocking).
    private static func socketPair() throws -> [Int32] {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK)
        return pair
    }

    /// Bytes waiting to be read on `descriptor`, without taking them.
    private static func pending(_ descriptor: Int32) -> Int {
        var scratch = [UInt8](repeating: 0, count: 4096)
        return max(0, recv(descriptor, &scratch, scratch.count, Int32(MSG_PEEK | MSG_DONTWAIT)))
    }

    private static func receiveAll(_ descriptor: Int32) -> [UInt8] {
        var scratch = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &scratch, scratch.count, Int32(MSG_DONTWAIT))
        return count > 0 ? Array(scratch.prefix(count)) : []
    }

    @Test("two streams read in one pass: neither answer leaves before both reads ran, both leave in that pass")
    func answersLeaveAfterThePassReads() throws {
        let loop = try EventLoop()
        let first = try Self.socketPair(), second = try Self.socketPair()
        defer { close(first[0]); close(second[0]) }
        let streamA = try #require(PlainStream(loop: loop, descriptor: first[1]))
        let streamB = try #require(PlainStream(loop: loop, descriptor: second[1]))
        defer { streamA.close(); streamB.close() }
        let echoA = Echo(), echoB = Echo()
        echoA.peekAtRead = { Self.pending(second[0]) }
        echoB.peekAtRead = { Self.pending(first[0]) }
        streamA.delegate = echoA
        streamB.delegate = echoB
        streamA.startReading(timeout: nil)
        streamB.startReading(timeout: nil)
        // Both readable before the pass: epoll reports them together.
        #expect(write(first[0], "one", 3) == 3)
        #expect(write(second[0], "two", 3) == 3)

        #expect(event_base_loop(loop.base, EVLOOP_ONCE) == 0)

        // Whichever read ran second found the other's answer not yet sent.
        #expect(echoA.seenByOtherPeerAtRead == [0])
        #expect(echoB.seenByOtherPeerAtRead == [0])
        // And both answers left within the same pass.
        #expect(Self.receiveAll(first[0]) == Array("one".utf8))
        #expect(Self.receiveAll(second[0]) == Array("two".utf8))
        #expect(streamA.output.isEmpty && streamB.output.isEmpty)
        #expect(echoA.drains == 1 && echoB.drains == 1)
    }

    /// How an answer is handed to the stream: written at the pass end
    /// (`flush`), or as a message's end, sent at once where the socket takes
    /// it (`flushMessageEnd`). Whatever the socket does not take, a failure
    /// and a close must come out the same either way.
    enum Handing: String, CaseIterable, CustomTestStringConvertible {
        case atPassEnd, asMessageEnd
        var testDescription: String { rawValue }
        func hand(to stream: PlainStream) {
            switch self {
            case .atPassEnd: stream.flush()
            case .asMessageEnd: stream.flushMessageEnd()
            }
        }
    }

    /// A stream on a fresh loop over a socket pair, with an `Echo` delegate;
    /// the caller closes the peer (`pair[0]`) and the stream.
    private static func echoStream() throws -> (loop: EventLoop, pair: [Int32], stream: PlainStream, echo: Echo) {
        let loop = try EventLoop()
        let pair = try socketPair()
        guard let stream = PlainStream(loop: loop, descriptor: pair[1]) else {
            close(pair[0])
            throw TestFailure("PlainStream")
        }
        let echo = Echo()
        stream.delegate = echo
        return (loop, pair, stream, echo)
    }

    @Test("an answer the socket cannot take whole goes on as the peer reads, and its drain is reported once",
          arguments: Handing.allCases)
    func partialWriteContinuesOnDrain(_ handing: Handing) throws {
        let (loop, pair, stream, echo) = try Self.echoStream()
        defer { close(pair[0]); stream.close() }
        let payload = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        stream.write(payload)
        handing.hand(to: stream)
        switch handing {
        case .atPassEnd: #expect(stream.output.count == payload.count, "nothing is written inside flush")
        case .asMessageEnd: #expect((1..<payload.count).contains(stream.output.count), "some, not 8 MiB, at once")
        }
        #expect(echo.drains == 0)

        var received: [UInt8] = []
        received.reserveCapacity(payload.count)
        let deadline = ContinuousClock.now + .seconds(20)
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        var scratch = [UInt8](repeating: 0, count: 256 * 1024)
        while received.count < payload.count && ContinuousClock.now < deadline {
            #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
            let count = read(pair[0], &scratch, scratch.count)
            if count > 0 { received.append(contentsOf: scratch.prefix(count)) }
        }
        #expect(received.count == payload.count)
        #expect(received == payload)
        _ = event_base_loop(loop.base, EVLOOP_NONBLOCK)
        #expect(stream.output.isEmpty)
        #expect(echo.drains == 1)
        #expect(echo.ended == nil)
    }

    @Test("a message end leaves at once, without a delegate call; its drain is reported at the pass end, once")
    func messageEndLeavesAtOnce() throws {
        let (loop, pair, stream, echo) = try Self.echoStream()
        defer { close(pair[0]); stream.close() }
        stream.write(Array("the whole answer".utf8))
        stream.flushMessageEnd()
        #expect(Self.receiveAll(pair[0]) == Array("the whole answer".utf8))
        #expect(stream.output.isEmpty)
        #expect(echo.drains == 0, "the stream reports only from its callbacks")
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        #expect(echo.drains == 1)
        #expect(echo.ended == nil)
    }

    @Test("a stream closed before its pass ends calls nothing; its peer gets what left at once, then end of stream",
          arguments: Handing.allCases)
    func closedBeforeThePassEnds(_ handing: Handing) throws {
        let (loop, pair, stream, echo) = try Self.echoStream()
        defer { close(pair[0]) }
        stream.write(Array("last".utf8))
        handing.hand(to: stream)
        stream.close()
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        #expect(echo.drains == 0)
        #expect(echo.ended == nil)
        var bytes = [UInt8](repeating: 0, count: 16)
        let sentAhead = read(pair[0], &bytes, bytes.count)
        #expect(sentAhead == (handing == .asMessageEnd ? 4 : 0))
        if sentAhead > 0 { #expect(read(pair[0], &bytes, bytes.count) == 0) }
    }

    @Test("a write that fails ends the stream with the error, from the pass end's callback",
          arguments: Handing.allCases)
    func failedWriteEndsTheStream(_ handing: Handing) throws {
        let (loop, pair, stream, echo) = try Self.echoStream()
        defer { stream.close() }
        // As the daemon does: a write to a closed peer fails with EPIPE, not a signal.
        signal(SIGPIPE, SIG_IGN)
        close(pair[0])
        stream.write(Array("to nobody".utf8))
        handing.hand(to: stream)
        #expect(echo.ended == nil, "the stream reports only from its callbacks")
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        guard case let .failed(detail)? = echo.ended else {
            Issue.record("expected a failed ending, got \(String(describing: echo.ended))")
            return
        }
        #expect(detail.hasPrefix("write:"))
        #expect(echo.drains == 0)
    }
}

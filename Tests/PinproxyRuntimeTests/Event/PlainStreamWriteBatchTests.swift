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

    @Test("an answer the socket cannot take whole goes on as the peer reads, and its drain is reported once")
    func partialWriteContinuesOnDrain() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        defer { close(pair[0]) }
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        defer { stream.close() }
        let echo = Echo()
        stream.delegate = echo
        let payload = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        stream.write(payload)
        stream.flush()
        #expect(stream.output.count == payload.count, "nothing is written inside flush")

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

    // MARK: a message's end (`flushMessageEnd`), sent before the pass ends

    @Test("a message end leaves at once, without a delegate call; its drain is reported at the pass end, once")
    func messageEndLeavesAtOnce() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        defer { close(pair[0]) }
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        defer { stream.close() }
        let echo = Echo()
        stream.delegate = echo
        stream.write(Array("the whole answer".utf8))
        stream.flushMessageEnd()
        #expect(Self.receiveAll(pair[0]) == Array("the whole answer".utf8))
        #expect(stream.output.isEmpty)
        #expect(echo.drains == 0, "the stream reports only from its callbacks")
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        #expect(echo.drains == 1)
        #expect(echo.ended == nil)
    }

    @Test("what the socket does not take of a message end goes on as the peer reads, its drain reported once")
    func messageEndPartlyWrittenGoesOn() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        defer { close(pair[0]) }
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        defer { stream.close() }
        let echo = Echo()
        stream.delegate = echo
        let payload = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        stream.write(payload)
        stream.flushMessageEnd()
        #expect(stream.output.count < payload.count, "the socket took some at once")
        #expect(stream.output.count > 0, "and not 8 MiB")
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
        #expect(received == payload)
        _ = event_base_loop(loop.base, EVLOOP_NONBLOCK)
        #expect(stream.output.isEmpty)
        #expect(echo.drains == 1)
        #expect(echo.ended == nil)
    }

    @Test("a message end that cannot be written ends the stream at the pass end, not inside the call")
    func messageEndToAClosedPeer() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        defer { stream.close() }
        let echo = Echo()
        stream.delegate = echo
        signal(SIGPIPE, SIG_IGN)
        close(pair[0])
        stream.write(Array("to nobody".utf8))
        stream.flushMessageEnd()
        #expect(echo.ended == nil, "the stream reports only from its callbacks")
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        guard case let .failed(detail)? = echo.ended else {
            Issue.record("expected a failed ending, got \(String(describing: echo.ended))")
            return
        }
        #expect(detail.hasPrefix("write:"))
        #expect(echo.drains == 0)
    }

    @Test("a stream closed after its message end left calls nothing at the pass end")
    func closedAfterMessageEnd() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        defer { close(pair[0]) }
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        let echo = Echo()
        stream.delegate = echo
        stream.write(Array("last".utf8))
        stream.flushMessageEnd()
        stream.close()
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        #expect(echo.drains == 0)
        #expect(echo.ended == nil)
        var bytes = [UInt8](repeating: 0, count: 16)
        #expect(read(pair[0], &bytes, bytes.count) == 4)
        #expect(read(pair[0], &bytes, bytes.count) == 0)
    }

    @Test("a stream closed with an answer scheduled writes nothing and calls nothing")
    func closedBeforeThePassEnds() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        defer { close(pair[0]) }
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        let echo = Echo()
        stream.delegate = echo
        stream.write(Array("dropped".utf8))
        stream.flush()
        stream.close()
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        #expect(echo.drains == 0)
        #expect(echo.ended == nil)
        // The peer reads end of stream, no byte before it.
        var byte: UInt8 = 0
        #expect(read(pair[0], &byte, 1) == 0)
    }

    @Test("a write that fails in the scheduled callback ends the stream with the error")
    func failedWriteEndsTheStream() throws {
        let loop = try EventLoop()
        let pair = try Self.socketPair()
        let stream = try #require(PlainStream(loop: loop, descriptor: pair[1]))
        defer { stream.close() }
        let echo = Echo()
        stream.delegate = echo
        // As the daemon does: a write to a closed peer fails with EPIPE, not a signal.
        signal(SIGPIPE, SIG_IGN)
        close(pair[0])
        stream.write(Array("to nobody".utf8))
        stream.flush()
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0, "1: no event left, which is fine")
        guard case let .failed(detail)? = echo.ended else {
            Issue.record("expected a failed ending, got \(String(describing: echo.ended))")
            return
        }
        #expect(detail.hasPrefix("write:"))
        #expect(echo.drains == 0)
    }
}

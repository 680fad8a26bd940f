import CLibevent
import Foundation
@testable import PinproxyRuntime
import Testing

/// A stream whose read timeout ran out in the loop pass that also gives it
/// new work: the pooled upstream connection a request takes as its idle time
/// ends. libevent 2.1 handles an expired timeout by taking the event off its
/// socket and queueing its callback behind the I/O callbacks of the same
/// pass; one of those (the client's request) re-arms the stream's reading
/// before that callback runs. Every way of re-arming an armed read must leave
/// the stream on its socket and drop the stale timeout: the next bytes are
/// read, and no timeout is reported for the wait that was given up.
@Suite("StreamEvents: re-arming a read whose timeout expired in the same pass")
struct ReadTimeoutRearmTests {
    /// Owns the watched `StreamEvents`: reads what its socket has on each
    /// read callback and records every timeout.
    final class Watcher: StreamEventsOwner {
        let events: StreamEvents
        var read: [UInt8] = []
        var timeouts = 0
        /// Stands for records a TLS stream read ahead: the read callback takes them.
        var holdsUnreadInput = false
        var unreadTaken = 0
        init(_ events: StreamEvents) { self.events = events }
        func eventsDidFireRead(timedOut: Bool) {
            if timedOut { timeouts += 1; return }
            if holdsUnreadInput { holdsUnreadInput = false; unreadTaken += 1 }
            _ = events.input.read(from: events.descriptor, atMost: 64)
            read += events.input.withContiguousPrefix(count: events.input.count) { Array($0) }
            events.input.drain(events.input.count)
        }
        func eventsDidFireWrite(timedOut: Bool) {}
    }

    /// The other connection of the pass: its read re-arms the watched stream.
    final class Trigger: ByteStreamDelegate {
        let action: () -> Void
        var fired = false
        init(_ action: @escaping () -> Void) { self.action = action }
        func streamDidRead(_ stream: ByteStream) {
            stream.input.drain(stream.input.count)
            fired = true
            action()
        }
        func streamDidDrain(_ stream: ByteStream) {}
        func stream(_ stream: ByteStream, didEnd ending: StreamEnd) {}
    }

    enum Rearm: String, CaseIterable, CustomTestStringConvertible {
        /// `ClientSession.attach`: the exchange gets the whole timeout from now.
        case restartTimeout = "restartReadTimeout"
        /// Reading asked for again with another timeout.
        case otherTimeout = "wantReading with another timeout"
        /// Reading asked for again without a timeout.
        case noTimeout = "wantReading without a timeout"
        /// `TLSStream.startReading` then `ClientSession.attach`'s restart, on
        /// a stream that holds records read ahead: the activation for them
        /// must not hide that the event is off its socket, and they are read.
        case unreadInputThenRestart = "activateRead for records read ahead, then restartReadTimeout"
        var testDescription: String { rawValue }

        func apply(to watcher: Watcher) {
            let events = watcher.events
            switch self {
            case .restartTimeout: events.restartReadTimeout()
            case .otherTimeout: events.wantReading(timeout: EventTimeout(.seconds(5)))
            case .noTimeout: events.wantReading(timeout: nil)
            case .unreadInputThenRestart:
                watcher.holdsUnreadInput = true
                events.activateRead()
                events.restartReadTimeout()
            }
        }
    }

    static func socketPair() throws -> [Int32] {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK)
        return pair
    }

    @Test("the stream reads what comes next, and no timeout is reported", arguments: Rearm.allCases)
    func rearmAfterExpiry(_ rearm: Rearm) throws {
        let loop = try EventLoop()
        let watchedPair = try Self.socketPair(), triggerPair = try Self.socketPair()
        defer { close(watchedPair[0]); close(triggerPair[0]) }
        let events = try #require(StreamEvents(loop: loop, descriptor: watchedPair[1]))
        let watcher = Watcher(events)
        #expect(events.attach(to: watcher))
        defer { events.close() }
        let other = try #require(PlainStream(loop: loop, descriptor: triggerPair[1]))
        defer { other.close() }
        let trigger = Trigger { rearm.apply(to: watcher) }
        other.delegate = trigger
        events.wantReading(timeout: EventTimeout(.milliseconds(20)))
        other.startReading(timeout: nil)

        // One pass, while nothing runs the loop, in which both happen: the
        // trigger becomes readable and the watched stream's timeout runs out
        // (this sleep outlasts it; nothing is polled). The trigger's callback
        // runs first, as I/O callbacks come before expired timeouts.
        #expect(write(triggerPair[0], "x", 1) == 1)
        usleep(60_000)
        #expect(event_base_loop(loop.base, EVLOOP_ONCE) == 0)
        #expect(trigger.fired, "the trigger ran in that pass")
        #expect(watcher.timeouts == 0, "a timeout given up for new work is not reported")
        if rearm == .unreadInputThenRestart {
            #expect(watcher.unreadTaken == 1, "the records read ahead got their read callback")
        }

        // The bytes that come next are read at once, not after a timeout.
        #expect(write(watchedPair[0], "y", 1) == 1)
        let started = ContinuousClock.now
        #expect(event_base_loop(loop.base, EVLOOP_ONCE) == 0)
        #expect(watcher.read == Array("y".utf8), "the stream still watches its socket")
        #expect(watcher.timeouts == 0)
        #expect(started.secondsElapsed < 1)
    }
}

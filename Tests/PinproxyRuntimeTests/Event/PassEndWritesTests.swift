import CLibevent
import Foundation
@testable import PinproxyRuntime
import Testing

/// The loop's one queue of end-of-pass writes (`PassEndWrites`), which both
/// stream kinds use (`PlainStream.flush` towards clients, `TLSStream.flush`
/// towards upstreams): each scheduled stream is called once, after the
/// pass's other callbacks, in the order scheduled; a stream that closes or
/// goes away with its write queued is never called, nor one whose output was
/// written meanwhile; a write scheduled while the queue runs still runs in
/// that pass.
@Suite("PassEndWrites: the end-of-pass writes of a loop")
struct PassEndWritesTests {
    /// Stands in for a stream: records its callbacks, telling the scheduled
    /// write (write event not armed) from the socket's write callback.
    final class Owner: StreamEventsOwner {
        let name: String
        let log: Log
        weak var events: StreamEvents?
        /// Each read schedules this stream's write, twice (the second is a no-op).
        var schedulesOnRead = false
        var onScheduledWrite: () -> Void = {}
        init(name: String, log: Log) { self.name = name; self.log = log }
        func eventsDidFireRead(timedOut: Bool) {
            log.entries.append("read \(name)")
            guard schedulesOnRead, let events else { return }
            PassEndWritesTests.schedule(events)
            PassEndWritesTests.schedule(events)
            events.stopReading()
        }
        func eventsDidFireWrite(timedOut: Bool) {
            guard events?.writeArmed == false else { return log.entries.append("write event \(name)") }
            log.entries.append("scheduled \(name)")
            onScheduledWrite()
        }
        var holdsUnreadInput: Bool { false }
    }

    final class Log { var entries: [String] = [] }

    /// A stream's events on one end of a socket pair, attached to `owner`
    /// (the other end is returned to close).
    private static func events(_ loop: EventLoop, _ owner: Owner) throws -> (StreamEvents, Int32) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK)
        let events = try #require(StreamEvents(loop: loop, descriptor: pair[1]))
        #expect(events.attach(to: owner))
        owner.events = events
        return (events, pair[0])
    }

    /// What a stream's `flush` does: output queued, its write scheduled.
    static func schedule(_ events: StreamEvents) {
        events.output.append([0x78])
        events.scheduleWrite()
    }

    @Test("scheduled writes run once each, in order, after the reads epoll reported in the same pass")
    func afterTheReadsInOrder() throws {
        let loop = try EventLoop()
        let log = Log()
        let a = Owner(name: "a", log: log), b = Owner(name: "b", log: log)
        a.schedulesOnRead = true
        b.schedulesOnRead = true
        let (eventsA, peerA) = try Self.events(loop, a)
        let (eventsB, peerB) = try Self.events(loop, b)
        defer { eventsA.close(); eventsB.close(); close(peerA); close(peerB) }
        eventsA.wantReading(timeout: nil)
        eventsB.wantReading(timeout: nil)
        #expect(write(peerA, "x", 1) == 1)
        #expect(write(peerB, "y", 1) == 1)

        #expect(event_base_loop(loop.base, EVLOOP_ONCE) == 0)

        #expect(log.entries.count == 4)
        #expect(Set(log.entries.prefix(2)) == ["read a", "read b"], "both reads before any write: \(log.entries)")
        let readOrder = log.entries.prefix(2).map { $0.dropFirst(5) }
        #expect(log.entries.suffix(2).map { $0.dropFirst(10) } == readOrder, "writes in the order scheduled: \(log.entries)")
        #expect(!eventsA.writeScheduled && !eventsB.writeScheduled)
    }

    @Test("a scheduled write whose output is gone by the end of the pass calls nothing")
    func emptiedOutput() throws {
        let loop = try EventLoop()
        let log = Log()
        let owner = Owner(name: "s", log: log)
        let (events, peer) = try Self.events(loop, owner)
        defer { events.close(); close(peer) }
        Self.schedule(events)
        events.output.drain(events.output.count)

        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0)

        #expect(log.entries.isEmpty)
        #expect(!events.writeScheduled)
    }

    @Test("a stream closed, or released, with its write queued is never called")
    func closedOrReleased() throws {
        let loop = try EventLoop()
        let log = Log()
        let kept = Owner(name: "kept", log: log), closed = Owner(name: "closed", log: log)
        let (keptEvents, keptPeer) = try Self.events(loop, kept)
        let (closedEvents, closedPeer) = try Self.events(loop, closed)
        defer { keptEvents.close(); close(keptPeer); close(closedPeer) }
        var releasedPeer: Int32 = -1
        do {
            let released = Owner(name: "released", log: log)
            let (releasedEvents, peer) = try Self.events(loop, released)
            releasedPeer = peer
            Self.schedule(releasedEvents)
            // Its last reference goes here: deinit closes it and takes the entry out.
        }
        defer { close(releasedPeer) }
        Self.schedule(closedEvents)
        Self.schedule(keptEvents)
        closedEvents.close()

        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0)

        #expect(log.entries == ["scheduled kept"])
    }

    @Test("a write's callback may close a later stream of the same pass, and schedule one that runs in that pass")
    func reentrantCallbacks() throws {
        let loop = try EventLoop()
        let log = Log()
        let first = Owner(name: "first", log: log), second = Owner(name: "second", log: log)
        let third = Owner(name: "third", log: log)
        let (firstEvents, firstPeer) = try Self.events(loop, first)
        let (secondEvents, secondPeer) = try Self.events(loop, second)
        let (thirdEvents, thirdPeer) = try Self.events(loop, third)
        defer { firstEvents.close(); secondEvents.close(); thirdEvents.close(); close(firstPeer); close(secondPeer); close(thirdPeer) }
        var firstTime = true
        first.onScheduledWrite = {
            guard firstTime else { return }
            firstTime = false
            secondEvents.close()
            Self.schedule(thirdEvents)
            // Its own again: runs once more, after third.
            Self.schedule(firstEvents)
        }
        Self.schedule(firstEvents)
        Self.schedule(secondEvents)

        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0)

        #expect(log.entries == ["scheduled first", "scheduled third", "scheduled first"])
        // The queue is idle again: a write scheduled now runs on the next pass.
        Self.schedule(thirdEvents)
        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0)
        #expect(log.entries.last == "scheduled third" && log.entries.count == 4)
    }

    @Test("a write event armed after the write was scheduled takes the write over")
    func armedWriteTakesOver() throws {
        let loop = try EventLoop()
        let log = Log()
        let owner = Owner(name: "s", log: log)
        let (events, peer) = try Self.events(loop, owner)
        defer { events.close(); close(peer) }
        Self.schedule(events)
        events.armWrite(timeout: nil)

        #expect(event_base_loop(loop.base, EVLOOP_ONCE) == 0)

        #expect(log.entries == ["write event s"], "the socket's write callback, not a second write: \(log.entries)")
    }
}

import CLibevent
import Foundation
@testable import PinproxyRuntime
import Testing

/// The loop's one queue of end-of-pass writes (`PassEndWrites`), which both
/// stream kinds use (`PlainStream.flush` towards clients, `TLSStream.flush`
/// towards upstreams): each scheduled stream is called once, after the
/// pass's other callbacks, in the order scheduled; a stream that closes or
/// goes away with its write queued is never called; a write scheduled while
/// the queue runs still runs in that pass.
@Suite("PassEndWrites: the end-of-pass writes of a loop")
struct PassEndWritesTests {
    /// Stands in for a stream: records when its scheduled write runs.
    final class Owner: StreamEventsOwner {
        let name: String
        let log: Log
        var onScheduledWrite: () -> Void = {}
        init(name: String, log: Log) { self.name = name; self.log = log }
        func eventsDidFireRead(timedOut: Bool) { log.entries.append("read \(name)") }
        func eventsDidFireWrite(timedOut: Bool) { log.entries.append("write event \(name)") }
        func eventsDidRunScheduledWrite() {
            log.entries.append("scheduled \(name)")
            onScheduledWrite()
        }
        var holdsUnreadInput: Bool { false }
    }

    final class Log { var entries: [String] = [] }

    /// A stream's events on one end of a socket pair (the other end is returned to close).
    private static func events(_ loop: EventLoop, _ owner: StreamEventsOwner) throws -> (StreamEvents, Int32) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
        _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK)
        let events = try #require(StreamEvents(loop: loop, descriptor: pair[1]))
        #expect(events.attach(to: owner))
        return (events, pair[0])
    }

    @Test("scheduled writes run once each, in order, after the reads epoll reported in the same pass")
    func afterTheReadsInOrder() throws {
        let loop = try EventLoop()
        let log = Log()
        let a = Owner(name: "a", log: log), b = Owner(name: "b", log: log)
        // Each read schedules its own stream's write, twice (the second is a no-op).
        final class Reader: StreamEventsOwner {
            let inner: Owner
            weak var events: StreamEvents?
            init(_ inner: Owner) { self.inner = inner }
            func eventsDidFireRead(timedOut: Bool) {
                inner.eventsDidFireRead(timedOut: timedOut)
                events?.scheduleWrite()
                events?.scheduleWrite()
                events?.stopReading()
            }
            func eventsDidFireWrite(timedOut: Bool) { inner.eventsDidFireWrite(timedOut: timedOut) }
            func eventsDidRunScheduledWrite() { inner.eventsDidRunScheduledWrite() }
            var holdsUnreadInput: Bool { false }
        }
        let readerA = Reader(a), readerB = Reader(b)
        let (eventsA, peerA) = try Self.events(loop, readerA)
        let (eventsB, peerB) = try Self.events(loop, readerB)
        defer { eventsA.close(); eventsB.close(); close(peerA); close(peerB) }
        readerA.events = eventsA
        readerB.events = eventsB
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
            releasedEvents.scheduleWrite()
            // Its last reference goes here: deinit closes it and takes the entry out.
        }
        defer { close(releasedPeer) }
        closedEvents.scheduleWrite()
        keptEvents.scheduleWrite()
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
            thirdEvents.scheduleWrite()
            // Its own again: runs once more, after third.
            firstEvents.scheduleWrite()
        }
        firstEvents.scheduleWrite()
        secondEvents.scheduleWrite()

        #expect(event_base_loop(loop.base, EVLOOP_NONBLOCK) >= 0)

        #expect(log.entries == ["scheduled first", "scheduled third", "scheduled first"])
        // The queue is idle again: a write scheduled now runs on the next pass.
        thirdEvents.scheduleWrite()
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
        events.scheduleWrite()
        events.armWrite(timeout: nil)

        #expect(event_base_loop(loop.base, EVLOOP_ONCE) == 0)

        #expect(log.entries == ["write event s"], "the socket's write callback, not a second write: \(log.entries)")
    }
}

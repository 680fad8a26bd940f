import Foundation

/// One pool key's idle upstream connections, and which one the next
/// exchange gets: of those in turn, the one idle longest.
///
/// Oldest first, every connection in turn serves, so concurrent exchanges
/// spread over all of them, and over the upstream processes or workers that
/// accepted them. Handing out the most recently parked instead lets a subset
/// serve the whole load, and not a random one: the newest sends the requests
/// of one loop pass down the connections the answers of the pass before
/// just returned (the latency tail was longer that way), and the set reused
/// after a pause is the one whose answers came last before it, often all
/// from one upstream worker, which then serves the load alone (1 MiB bodies
/// came through at 0.8 × the rate; bench/README.md, "The pool's order").
///
/// Turns over more connections than the load needs cost CPU instead (16
/// clients after a load of 128: 18.1–19.4 µs a request, against 17.4–18.3
/// with the turn kept to the need; bench/README.md), so connections the
/// load did not need are set aside: when a `period` with exchanges ends, as
/// many as were still idle in turn at its busiest moment (the fewest in
/// turn after any take) leave the turn, from its front. They are handed out
/// only when none in turn is idle, the one set aside last first, and
/// otherwise idle out through `timeouts.idle`, as a surplus left by a burst
/// should. A period without exchanges says nothing of the need and sets
/// none aside.
struct IdleConnections {
    /// A ring, in turn order from `head`: taking the front moves nothing
    /// (an array's front removal moves every later element). Its capacity is
    /// a power of two, or zero before the first connection is parked.
    private var ring: [UpstreamConnection?] = []
    private var head = 0
    private var ringCount = 0
    /// Out of turn, in the order they were set aside.
    private var aside: [UpstreamConnection] = []
    /// The fewest in turn after a take since `periodStart`; nil before a take.
    private var fewestInTurn: Int?
    private var periodStart: Int64 = 0

    /// How long the demand is watched before the connections it did not
    /// need are set aside (milliseconds).
    static let period: Int64 = 1_000

    /// Milliseconds on the coarse monotonic clock: the vDSO reads it without
    /// a syscall, and its few milliseconds of resolution are nothing beside
    /// the period.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    init() {}

    var count: Int { ringCount + aside.count }

    var isEmpty: Bool { count == 0 }

    /// How many are in turn (tests).
    var inTurn: Int { ringCount }

    /// Every connection held: those set aside, then those in turn, in turn order.
    var connections: [UpstreamConnection] { aside + (0..<ringCount).compactMap { ring[slot($0)] } }

    /// `connection` joins the turn, at its back.
    mutating func append(_ connection: UpstreamConnection) {
        if ringCount == ring.count { grow() }
        ring[slot(ringCount)] = connection
        ringCount += 1
    }

    /// `other`'s connections behind these, all in turn.
    mutating func append(contentsOf other: IdleConnections) {
        for connection in other.connections { append(connection) }
    }

    /// The next connection out at `time` (see the type's comment), or nil.
    mutating func take(at time: Int64) -> UpstreamConnection? {
        if time - periodStart >= Self.period { endPeriod(at: time) }
        guard ringCount > 0 else {
            fewestInTurn = 0
            return aside.popLast()
        }
        let taken = takeFromFront()
        fewestInTurn = min(fewestInTurn ?? ringCount, ringCount)
        return taken
    }

    /// Takes `connection` out wherever it is (retired while idle); false when it is not here.
    mutating func remove(_ connection: UpstreamConnection) -> Bool {
        if let index = aside.firstIndex(where: { $0 === connection }) {
            aside.remove(at: index)
            return true
        }
        guard let position = (0..<ringCount).first(where: { ring[slot($0)] === connection }) else { return false }
        // Closes the gap: the later entries move one slot toward the head.
        for later in position..<(ringCount - 1) { ring.swapAt(slot(later), slot(later + 1)) }
        _ = takeOut(at: slot(ringCount - 1))
        return true
    }

    /// The same connections, each replaced by `transform`'s, all in turn, in the same order.
    func mapConnections(_ transform: (UpstreamConnection) -> UpstreamConnection) -> IdleConnections {
        var mapped = IdleConnections()
        for connection in connections { mapped.append(transform(connection)) }
        return mapped
    }

    /// Sets aside those in turn that the period's fullest moment did not need.
    private mutating func endPeriod(at time: Int64) {
        for _ in 0..<(fewestInTurn ?? 0) {
            guard let unneeded = takeFromFront() else { break }
            aside.append(unneeded)
        }
        fewestInTurn = nil
        periodStart = time
    }

    /// The ring slot of the entry `position` places after the front.
    private func slot(_ position: Int) -> Int { (head + position) & (ring.count - 1) }

    /// The front of the turn, out; the head moves on.
    private mutating func takeFromFront() -> UpstreamConnection? {
        guard ringCount > 0 else { return nil }
        let taken = takeOut(at: head)
        head = (head + 1) & (ring.count - 1)
        return taken
    }

    /// Empties `index` and counts it out.
    private mutating func takeOut(at index: Int) -> UpstreamConnection? {
        // Moved out, not copied: no retain and release for the slot.
        var taken: UpstreamConnection?
        swap(&taken, &ring[index])
        ringCount -= 1
        return taken
    }

    /// Twice the capacity (four at first), the entries moved to its start in order.
    private mutating func grow() {
        var larger = [UpstreamConnection?](repeating: nil, count: max(4, ring.count * 2))
        for position in 0..<ringCount { swap(&larger[position], &ring[slot(position)]) }
        ring = larger
        head = 0
    }
}

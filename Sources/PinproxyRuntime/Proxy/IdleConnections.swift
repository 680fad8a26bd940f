import Foundation

/// One pool key's idle upstream connections, in the order they were parked,
/// and the rule for which one the next exchange gets.
///
/// While the oldest has been idle less than `roundRobinWindow`, the oldest:
/// under load every pooled connection takes its turn, so concurrent
/// exchanges spread over all of them, and over the upstream processes or
/// workers that serve them. Handing out the newest instead sends the
/// requests of one loop pass down the connections the answers of the pass
/// before just returned; measured against a two-worker upstream, the
/// latency tail was longer that way (bench/README.md, "The pool's order").
///
/// Past the window, the newest: at a low request rate a surplus left by a
/// burst then idles out through `timeouts.idle` instead of being kept warm
/// by turns, and the connection reused is the one least likely to meet the
/// server's own keep-alive close (Apache httpd's and Node's default after 5 s).
struct IdleConnections {
    /// A parked connection and when it was parked (`now()`).
    private struct Entry {
        let connection: UpstreamConnection
        let parkedAt: Int64
    }

    /// A ring, oldest first from `head`: taking either end moves nothing
    /// (an array's front removal moves every later element). Its capacity is
    /// a power of two, or zero before the first connection is parked.
    private var ring: [Entry?] = []
    private var head = 0
    private(set) var count = 0

    /// How long the oldest may have idled and still be the next one out.
    static let roundRobinWindow: Int64 = 1_000

    /// Milliseconds on the coarse monotonic clock: the vDSO reads it without
    /// a syscall, and its few milliseconds of resolution are nothing beside
    /// the window.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
    }

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Every connection held, oldest first.
    var connections: [UpstreamConnection] { entries.map(\.connection) }

    /// The entries held, oldest first (the slots from `head` for `count` are never empty).
    private var entries: [Entry] { (0..<count).compactMap { ring[slot($0)] } }

    mutating func append(_ connection: UpstreamConnection, parkedAt time: Int64) {
        if count == ring.count { grow() }
        ring[slot(count)] = Entry(connection: connection, parkedAt: time)
        count += 1
    }

    /// `other`'s connections behind these, their parking times kept.
    mutating func append(contentsOf other: IdleConnections) {
        for entry in other.entries { append(entry.connection, parkedAt: entry.parkedAt) }
    }

    /// The next connection out at `time` (see the type's comment), or nil.
    mutating func take(at time: Int64) -> UpstreamConnection? {
        guard count > 0, let oldest = ring[head] else { return nil }
        guard time - oldest.parkedAt < Self.roundRobinWindow else { return takeOut(at: slot(count - 1)) }
        let taken = takeOut(at: head)
        head = (head + 1) & (ring.count - 1)
        return taken
    }

    /// Takes `connection` out wherever it is (retired while idle); false when it is not here.
    mutating func remove(_ connection: UpstreamConnection) -> Bool {
        guard let position = (0..<count).first(where: { ring[slot($0)]?.connection === connection }) else { return false }
        // Closes the gap: the later entries move one slot toward the head.
        for later in position..<(count - 1) { ring.swapAt(slot(later), slot(later + 1)) }
        _ = takeOut(at: slot(count - 1))
        return true
    }

    /// The same connections, each replaced by `transform`'s, in the same order and with the same times.
    func mapConnections(_ transform: (UpstreamConnection) -> UpstreamConnection) -> IdleConnections {
        var mapped = IdleConnections()
        for entry in entries { mapped.append(transform(entry.connection), parkedAt: entry.parkedAt) }
        return mapped
    }

    /// The ring slot of the entry `position` places after the oldest.
    private func slot(_ position: Int) -> Int { (head + position) & (ring.count - 1) }

    /// Empties `index` (the oldest's or the newest's slot) and counts it out.
    private mutating func takeOut(at index: Int) -> UpstreamConnection? {
        // Moved out, not copied: no retain and release for the slot.
        var taken: Entry?
        swap(&taken, &ring[index])
        count -= 1
        return taken?.connection
    }

    /// Twice the capacity (four at first), the entries moved to its start in order.
    private mutating func grow() {
        var larger = [Entry?](repeating: nil, count: max(4, ring.count * 2))
        for position in 0..<count { swap(&larger[position], &ring[slot(position)]) }
        ring = larger
        head = 0
    }
}

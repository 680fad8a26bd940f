/// One pool key's idle upstream connections, in the order they were parked;
/// the next exchange gets the one idle longest.
///
/// Oldest first, every pooled connection takes its turn, so concurrent
/// exchanges spread over all of them, and over the upstream processes or
/// workers that accepted them. Any rule that prefers recently parked
/// connections lets a subset serve the whole load, and which subset is not
/// random: the newest sends the requests of one loop pass down the
/// connections the answers of the pass before just returned (the latency
/// tail was longer that way), and a set reused after a pause is the one
/// whose answers came last before it, often all from one upstream worker,
/// which then serves the load alone (1 MiB bodies came through at 0.8 × the
/// rate; bench/README.md, "The pool's order").
///
/// The cost: while a key's exchanges come faster than one per connection
/// per `timeouts.idle`, no pooled connection idles out, so a surplus left by
/// a burst stays pooled (at most `upstream_reuse.idle_per_host`). A
/// connection the server closes while it is idle is retired at once (the
/// pool watches it); one that closes in the instant a request goes out is
/// retried for a request that may be sent again (`ExchangeProgress.isRetriable`).
struct IdleConnections {
    /// A ring, oldest first from `head`: taking the oldest moves nothing
    /// (an array's front removal moves every later element). Its capacity is
    /// a power of two, or zero before the first connection is parked.
    private var ring: [UpstreamConnection?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Every connection held, oldest first (the slots from `head` for `count` are never empty).
    var connections: [UpstreamConnection] { (0..<count).compactMap { ring[slot($0)] } }

    mutating func append(_ connection: UpstreamConnection) {
        if count == ring.count { grow() }
        ring[slot(count)] = connection
        count += 1
    }

    /// `other`'s connections behind these, in their order.
    mutating func append(contentsOf other: IdleConnections) {
        for connection in other.connections { append(connection) }
    }

    /// The connection idle longest, or nil.
    mutating func take() -> UpstreamConnection? {
        guard count > 0 else { return nil }
        let taken = takeOut(at: head)
        head = (head + 1) & (ring.count - 1)
        return taken
    }

    /// Takes `connection` out wherever it is (retired while idle); false when it is not here.
    mutating func remove(_ connection: UpstreamConnection) -> Bool {
        guard let position = (0..<count).first(where: { ring[slot($0)] === connection }) else { return false }
        // Closes the gap: the later entries move one slot toward the head.
        for later in position..<(count - 1) { ring.swapAt(slot(later), slot(later + 1)) }
        _ = takeOut(at: slot(count - 1))
        return true
    }

    /// The same connections, each replaced by `transform`'s, in the same order.
    func mapConnections(_ transform: (UpstreamConnection) -> UpstreamConnection) -> IdleConnections {
        var mapped = IdleConnections()
        for connection in connections { mapped.append(transform(connection)) }
        return mapped
    }

    /// The ring slot of the entry `position` places after the oldest.
    private func slot(_ position: Int) -> Int { (head + position) & (ring.count - 1) }

    /// Empties `index` (the oldest's or the newest's slot) and counts it out.
    private mutating func takeOut(at index: Int) -> UpstreamConnection? {
        // Moved out, not copied: no retain and release for the slot.
        var taken: UpstreamConnection?
        swap(&taken, &ring[index])
        count -= 1
        return taken
    }

    /// Twice the capacity (four at first), the entries moved to its start in order.
    private mutating func grow() {
        var larger = [UpstreamConnection?](repeating: nil, count: max(4, ring.count * 2))
        for position in 0..<count { swap(&larger[position], &ring[slot(position)]) }
        ring = larger
        head = 0
    }
}

import PinproxyCore

/// The traffic of one listener (SPEC §6): connections, answers by status
/// class, CONNECT outcomes and denied requests. One lane per event loop,
/// each written only by its loop; a scrape sums the lanes.
final class ListenerCounters: Sendable {
    final class Lane: Sendable {
        let accepted = Tally()
        /// Index 0 is 1xx … 4 is 5xx.
        let responses: [Tally] = .tallies(5)
        let intercepted = Tally()
        let tunnelled = Tally()
        let refusedConnects = Tally()
        let denied = Tally()

        /// A final status sent to a client (a response relayed, an answer of pinproxy's own).
        @inline(__always)
        func answered(_ status: Int) {
            let index = status / 100 - 1
            if index >= 0 && index < 5 { responses[index].add() }
        }
    }

    let name: String
    let mode: String
    let lanes: [Lane]

    init(name: String, mode: String, loops: Int) {
        self.name = name
        self.mode = mode
        lanes = (0..<loops).map { _ in Lane() }
    }

    var sample: MetricsSnapshot.Listener {
        func sum(_ tally: (Lane) -> Tally) -> UInt64 { lanes.reduce(0) { $0 &+ tally($1).count } }
        return MetricsSnapshot.Listener(
            name: name, mode: mode, accepted: sum(\.accepted),
            responses: (0..<5).map { index in sum { $0.responses[index] } },
            intercepted: sum(\.intercepted), tunnelled: sum(\.tunnelled), refusedConnects: sum(\.refusedConnects),
            denied: sum(\.denied))
    }
}

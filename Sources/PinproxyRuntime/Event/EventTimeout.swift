import Foundation

/// A timeout as libevent takes it, converted once: turning a `Duration` into
/// a `timeval` costs 128-bit divisions, and per-request timeouts are set on
/// every exchange.
struct EventTimeout: Sendable, Equatable {
    let value: timeval

    static func == (lhs: EventTimeout, rhs: EventTimeout) -> Bool {
        lhs.value.tv_sec == rhs.value.tv_sec && lhs.value.tv_usec == rhs.value.tv_usec
    }

    init(_ duration: Duration) {
        value = timeval(duration: duration)
    }

    /// What is left until `deadline`, at least a millisecond: libevent reads a
    /// zero timeval as "no timeout", which would let a late deadline wait forever.
    static func until(_ deadline: ContinuousClock.Instant) -> EventTimeout {
        EventTimeout(max(deadline - .now, .milliseconds(1)))
    }
}

extension timeval {
    init(duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}

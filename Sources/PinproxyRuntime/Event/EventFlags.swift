internal import CLibevent

/// Every conversion between libevent's integer flags and Swift lives here
/// (EV_* are Int32 macros while the APIs take `short`).
enum EventFlags {
    static let read = Int16(EV_READ)
    static let write = Int16(EV_WRITE)
    static let persistentRead = Int16(EV_READ | EV_PERSIST)
    static let persistentWrite = Int16(EV_WRITE | EV_PERSIST)
    static let persistentSignal = Int16(EV_SIGNAL | EV_PERSIST)
    /// `event_active`'s `res` argument for a write, and for a read.
    static let activeWrite = Int32(EV_WRITE)
    static let activeRead = Int32(EV_READ)

    /// Whether an event callback's `what` says its timeout ran out.
    static func timedOut(_ what: Int16) -> Bool { what & Int16(EV_TIMEOUT) != 0 }
}

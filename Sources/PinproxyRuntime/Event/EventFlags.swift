internal import CLibevent

/// Every conversion between libevent's integer flags and Swift lives here
/// (EV_* are Int32 macros while the APIs take `short`; BEV_OPT_* is a C enum).
enum EventFlags {
    static let read = Int16(EV_READ)
    static let write = Int16(EV_WRITE)
    static let readWrite = Int16(EV_READ | EV_WRITE)
    static let persistentRead = Int16(EV_READ | EV_PERSIST)
    static let persistentWrite = Int16(EV_WRITE | EV_PERSIST)
    static let persistentSignal = Int16(EV_SIGNAL | EV_PERSIST)
    /// `event_active`'s `res` argument for a write.
    static let activeWrite = Int32(EV_WRITE)

    /// Whether an event callback's `what` says its timeout ran out.
    static func timedOut(_ what: Int16) -> Bool { what & Int16(EV_TIMEOUT) != 0 }

    /// A bufferevent event callback's `what`, decoded.
    struct BufferEventReport {
        let what: Int16
        var connected: Bool { what & Int16(BEV_EVENT_CONNECTED) != 0 }
        var timedOut: Bool { what & Int16(BEV_EVENT_TIMEOUT) != 0 }
        var whileReading: Bool { what & Int16(BEV_EVENT_READING) != 0 }
        var failed: Bool { what & Int16(BEV_EVENT_ERROR) != 0 }
    }

    /// Options for a `TLSStream`'s bufferevent: callbacks deferred to the loop
    /// so that a write or free inside a callback never re-enters another; no
    /// `BEV_OPT_CLOSE_ON_FREE`, because the stream frees the `SSL` and closes
    /// the socket itself, in order (`TLSConnection` owns the `SSL`).
    static let tlsStreamOptions = Int32(BEV_OPT_DEFER_CALLBACKS.rawValue)

    static let sslConnecting = bufferevent_ssl_state(rawValue: BUFFEREVENT_SSL_CONNECTING.rawValue)
}

internal import CLibevent

/// Every conversion between libevent's integer flags and Swift lives here
/// (EV_* are Int32 macros while the APIs take `short`; BEV_OPT_* is a C enum).
enum EventFlags {
    static let read = Int16(EV_READ)
    static let write = Int16(EV_WRITE)
    static let readWrite = Int16(EV_READ | EV_WRITE)

    /// Options for a `TLSStream`'s bufferevent: callbacks deferred to the loop
    /// so that a write or free inside a callback never re-enters another; no
    /// `BEV_OPT_CLOSE_ON_FREE`, because the stream frees the `SSL` and closes
    /// the socket itself, in order (`TLSConnection` owns the `SSL`).
    static let tlsStreamOptions = Int32(BEV_OPT_DEFER_CALLBACKS.rawValue)

    static let sslConnecting = bufferevent_ssl_state(rawValue: BUFFEREVENT_SSL_CONNECTING.rawValue)
}

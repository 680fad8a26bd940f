internal import CLibevent

/// Every conversion between libevent's integer flags and Swift lives here
/// (EV_* are Int32 macros while the APIs take `short`; BEV_OPT_* is a C enum).
enum EventFlags {
    static let read = Int16(EV_READ)
    static let write = Int16(EV_WRITE)
    static let readWrite = Int16(EV_READ | EV_WRITE)

    /// Options for every bufferevent pinproxy creates: free the socket (and the
    /// SSL) with the bufferevent, callbacks deferred to the loop so that a
    /// write or free inside a callback never re-enters another callback.
    static let bufferEventOptions = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue)

    static let sslConnecting = bufferevent_ssl_state(rawValue: BUFFEREVENT_SSL_CONNECTING.rawValue)
}

/// What a bufferevent's event callback reports, decoded once.
struct BufferEventEvents: OptionSet, CustomStringConvertible {
    let rawValue: Int16
    static let reading = BufferEventEvents(rawValue: Int16(BEV_EVENT_READING))
    static let writing = BufferEventEvents(rawValue: Int16(BEV_EVENT_WRITING))
    static let eof = BufferEventEvents(rawValue: Int16(BEV_EVENT_EOF))
    static let error = BufferEventEvents(rawValue: Int16(BEV_EVENT_ERROR))
    static let timeout = BufferEventEvents(rawValue: Int16(BEV_EVENT_TIMEOUT))
    static let connected = BufferEventEvents(rawValue: Int16(BEV_EVENT_CONNECTED))

    var description: String {
        var names: [String] = []
        if contains(.reading) { names.append("reading") }
        if contains(.writing) { names.append("writing") }
        if contains(.eof) { names.append("eof") }
        if contains(.error) { names.append("error") }
        if contains(.timeout) { names.append("timeout") }
        if contains(.connected) { names.append("connected") }
        return names.joined(separator: "|")
    }
}

/// The configuration a test world hands to pinproxy, as JSON5 text: what
/// every world has (the violation log, the trust store, `resolve` entries for
/// its peers) plus whatever the test adds; the listeners are given when the
/// text is made.
///
/// The same text goes to the in-process daemon and, as a file, to the binary,
/// so the two runtimes are configured alike.
struct ProxyConfiguration {
    /// A listener on 127.0.0.1.
    enum Listener {
        case forward(port: UInt16)
        /// Sends every request to `upstream`.
        case gateway(port: UInt16, upstream: String)
    }

    var violationLog: String
    /// A PEM file of roots; nil leaves the system trust store.
    var trustStore: String?
    /// `authority → 127.0.0.1:port`, in the order they were added.
    private(set) var resolve: [(authority: String, port: UInt16)] = []
    var threads: Int?
    /// Members of the `timeouts` and `limits` sections, as JSON5 (`"idle": "1s",`).
    var timeouts = ""
    var limits = ""
    /// Further top-level members, as JSON5 (`"hosts": {…},`), added as they are.
    var extra = ""

    /// Sends connections for `authority` (`host:port`) to 127.0.0.1:`port`,
    /// replacing an earlier entry for it.
    mutating func resolve(_ authority: String, to port: UInt16) {
        resolve.removeAll { $0.authority == authority }
        resolve.append((authority, port))
    }

    /// The loopback port `authority` resolves to, if it has an entry.
    func port(of authority: String) -> UInt16? {
        resolve.first { $0.authority == authority }?.port
    }

    func text(listeners: [Listener]) -> String {
        let entries = listeners.map { listener in
            switch listener {
            case let .forward(port):
                #"{ "listen": "127.0.0.1:\#(port)", "mode": "forward" }"#
            case let .gateway(port, upstream):
                #"{ "listen": "127.0.0.1:\#(port)", "mode": "gateway", "upstream": "\#(upstream)" }"#
            }
        }
        var members = [
            #""listeners": [ \#(entries.joined(separator: ", ")) ],"#,
            #""violation_log": "\#(violationLog)","#,
        ]
        if let trustStore { members.append(#""trust_store": "\#(trustStore)","#) }
        if !resolve.isEmpty {
            let entries = resolve.map { #""\#($0.authority)": "127.0.0.1:\#($0.port)""# }
            members.append(#""resolve": { \#(entries.joined(separator: ", ")) },"#)
        }
        if let threads { members.append(#""threads": \#(threads),"#) }
        if !timeouts.isEmpty { members.append(#""timeouts": { \#(timeouts) },"#) }
        if !limits.isEmpty { members.append(#""limits": { \#(limits) },"#) }
        if !extra.isEmpty { members.append(extra) }
        return "{\n  " + members.joined(separator: "\n  ") + "\n}\n"
    }
}

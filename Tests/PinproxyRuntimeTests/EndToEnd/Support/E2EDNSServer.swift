import Foundation

/// Tests/Tools/dns.py on a loopback UDP port, and a resolv.conf that points
/// pinproxy's resolver at it (through `PINPROXY_RESOLV_CONF`), so DNS failures
/// are tested without a query leaving the machine.
final class E2EDNSServer {
    /// What the server answers to every query.
    enum Answer {
        case nxdomain
        case servfail
        /// Never answers: the resolver times out.
        case silent

        var arguments: [String] {
            switch self {
            case .nxdomain: ["--rcode", "3"]
            case .servfail: ["--rcode", "2"]
            case .silent: ["--silent"]
            }
        }
    }

    private let peer: PythonPeer
    /// A resolv.conf naming only this server.
    let resolvConf: String
    var port: UInt16 { peer.port }

    init(answer: Answer, directory: String) throws {
        let prefix = PythonPeer.filePrefix("dns", in: directory)
        peer = try PythonPeer(script: "dns.py", arguments: answer.arguments, filePrefix: prefix)
        resolvConf = prefix + ".resolv.conf"
        // libevent's evdns accepts "ip:port" after `nameserver`.
        try "nameserver 127.0.0.1:\(peer.port)\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
    }

    /// The environment that makes an in-process daemon use this server.
    var environment: [String: String] { ["PINPROXY_RESOLV_CONF": resolvConf] }
}

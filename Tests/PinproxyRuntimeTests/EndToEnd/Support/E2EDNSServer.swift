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

    let port: UInt16
    /// A resolv.conf naming only this server.
    let resolvConf: String
    private let process: Process

    init(answer: Answer, directory: String) throws {
        let name = UUID().uuidString
        let readyFile = directory + "/dns-\(name).port"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", ToolPaths.dnsScript, "--ready-file", readyFile] + answer.arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = ToolPaths.waitForFile(readyFile), let port = UInt16(line) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("dns.py did not start")
        }
        self.port = port
        resolvConf = directory + "/resolv-\(name).conf"
        // libevent's evdns accepts "ip:port" after `nameserver`.
        try "nameserver 127.0.0.1:\(port)\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The environment that makes an in-process daemon use this server.
    var environment: [String: String] { ["PINPROXY_RESOLV_CONF": resolvConf] }
}

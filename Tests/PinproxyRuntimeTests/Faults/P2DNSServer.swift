import Foundation

/// Tests/Tools/dns.py on a loopback UDP port, and a resolv.conf naming it, so
/// the daemon's resolver (`PINPROXY_RESOLV_CONF`) asks only this server.
final class P2DNSServer {
    /// How the server answers every query.
    enum Behaviour {
        case nxdomain
        case servfail
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
    let resolvConf: String
    private let process: Process

    init(_ behaviour: Behaviour, directory: String) throws {
        let readyFile = directory + "/dns-\(UUID().uuidString).port"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", ToolPaths.dnsScript, "--ready-file", readyFile] + behaviour.arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = ToolPaths.waitForFile(readyFile), let port = UInt16(line) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("dns.py did not start")
        }
        self.port = port
        resolvConf = directory + "/resolv-\(port).conf"
        try "nameserver 127.0.0.1:\(port)\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

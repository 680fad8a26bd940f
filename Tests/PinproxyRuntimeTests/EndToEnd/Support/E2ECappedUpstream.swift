import Foundation

/// Tests/Tools/upstream.py limited to TLS 1.2 at most. The script only sets a
/// minimum version; the maximum comes from an OpenSSL configuration file
/// (`MaxProtocol = TLSv1.2` in `system_default`) handed to that one process
/// through `OPENSSL_CONF`, so the in-process proxy's OpenSSL is unaffected.
final class E2ECappedUpstream {
    let port: UInt16
    private let process: Process
    private let eventsFile: String

    /// `extraArguments` go to upstream.py, e.g. `["--ciphers", "AES128-GCM-SHA256"]`.
    init(certificateChain: String, key: String, directory: String, extraArguments: [String] = []) throws {
        let name = UUID().uuidString
        let readyFile = directory + "/capped-\(name).port"
        let opensslConf = directory + "/capped-\(name).cnf"
        eventsFile = directory + "/capped-\(name).events"
        try """
        openssl_conf = default_conf
        [default_conf]
        ssl_conf = ssl_section
        [ssl_section]
        system_default = system_default_section
        [system_default_section]
        MaxProtocol = TLSv1.2

        """.write(toFile: opensslConf, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["OPENSSL_CONF=\(opensslConf)", "python3", ToolPaths.upstreamScript,
                             "--cert", certificateChain, "--key", key, "--port", "0",
                             "--ready-file", readyFile, "--events", eventsFile] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = ToolPaths.waitForFile(readyFile), let port = UInt16(line) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("upstream.py (TLS 1.2 cap) did not start")
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits until at least `count` connections have been logged, then returns them.
    func waitForConnections(_ count: Int, timeout: TimeInterval = 5) -> [TestUpstream.ConnectionRecord] {
        let deadline = Date().addingTimeInterval(timeout)
        var records = connections()
        while records.count < count && Date() < deadline {
            usleep(20_000)
            records = connections()
        }
        return records
    }

    private func connections() -> [TestUpstream.ConnectionRecord] {
        guard let text = try? String(contentsOfFile: eventsFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONDecoder().decode(TestUpstream.ConnectionRecord.self, from: Data($0.utf8))
        }
    }
}

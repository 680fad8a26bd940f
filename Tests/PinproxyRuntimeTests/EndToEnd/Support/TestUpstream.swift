import Foundation

/// A real TLS server on loopback (Tests/Tools/upstream.py, OpenSSL through
/// Python's ssl module), started per test and stopped when released.
final class TestUpstream {
    let port: UInt16
    private let process: Process
    private let eventsFile: String

    /// One line of the server's per-connection log.
    struct ConnectionRecord: Decodable {
        var handshake_ok: Bool
        var app_bytes: Int
        var requests: Int
    }

    init(certificateChain: String, key: String, directory: String, extraArguments: [String] = []) throws {
        let name = UUID().uuidString
        let readyFile = directory + "/upstream-\(name).port"
        eventsFile = directory + "/upstream-\(name).events"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", ToolPaths.upstreamScript, "--cert", certificateChain, "--key", key,
                             "--port", "0", "--ready-file", readyFile, "--events", eventsFile] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = ToolPaths.waitForFile(readyFile), let port = UInt16(line) else {
            process.terminate()
            throw TestFailure("upstream.py did not start")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: connections pooled by a proxy keep the server's threads busy,
        // and the test is over either way.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Every connection the server has finished with.
    func connections() -> [ConnectionRecord] {
        guard let text = try? String(contentsOfFile: eventsFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONDecoder().decode(ConnectionRecord.self, from: Data($0.utf8))
        }
    }

    /// Waits until at least `count` connections have been logged (they are
    /// logged when they close), then returns them.
    func waitForConnections(_ count: Int, timeout: TimeInterval = 5) -> [ConnectionRecord] {
        let deadline = Date().addingTimeInterval(timeout)
        var records = connections()
        while records.count < count && Date() < deadline {
            usleep(20_000)
            records = connections()
        }
        return records
    }

    /// The server's counters (`GET /stats`), fetched directly, not through the proxy.
    func stats(caFile: String) throws -> [String: Int] {
        let result = try Curl.run(["--cacert", caFile, "--resolve", "api.example.com:\(port):127.0.0.1",
                                   "https://api.example.com:\(port)/stats"])
        return (try JSONSerialization.jsonObject(with: result.body) as? [String: Int]) ?? [:]
    }
}

import Foundation

/// A hostile TLS upstream on loopback (Tests/Tools/fault_upstream.py), one
/// misbehaviour per instance, started per test and killed when released.
final class FaultUpstream {
    /// The misbehaviours fault_upstream.py knows, by its `--mode` names.
    enum Mode: String {
        case resetHandshake = "reset-handshake"
        case stallResponse = "stall-response"
        case endlessHead = "endless-head"
        case garbageRecords = "garbage-records"
        case earlyAnswer = "early-answer"
        case contentLengthAndTransferEncoding = "cl-and-te"
    }

    /// One line of the server's per-connection log.
    struct ConnectionRecord: Decodable {
        var mode: String
        var handshake_ok: Bool
        var head_bytes: Int
        var drained: Int
        var error: String?
    }

    static var script: String { ToolPaths.repositoryRoot + "/Tests/Tools/fault_upstream.py" }

    let port: UInt16
    private let process: Process
    private let eventsFile: String

    init(mode: Mode, certificateChain: String, key: String, directory: String) throws {
        let name = UUID().uuidString
        let readyFile = directory + "/fault-\(name).port"
        eventsFile = directory + "/fault-\(name).events"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script, "--mode", mode.rawValue, "--cert", certificateChain,
                             "--key", key, "--ready-file", readyFile, "--events", eventsFile]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = ToolPaths.waitForFile(readyFile), let port = UInt16(line) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("fault_upstream.py --mode \(mode.rawValue) did not start")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: stalling connections hold the server's threads, and the test is over.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits until at least `count` connections have ended, then returns them.
    func waitForConnections(_ count: Int, timeout: TimeInterval = 5) -> [ConnectionRecord] {
        let deadline = Date().addingTimeInterval(timeout)
        var records: [ConnectionRecord] = []
        repeat {
            let text = (try? String(contentsOfFile: eventsFile, encoding: .utf8)) ?? ""
            records = text.split(separator: "\n").compactMap {
                try? JSONDecoder().decode(ConnectionRecord.self, from: Data($0.utf8))
            }
            if records.count >= count { break }
            usleep(20_000)
        } while Date() < deadline
        return records
    }
}

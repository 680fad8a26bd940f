import Foundation

/// A TLS origin that records every byte and every request it parsed
/// (Tests/Tools/recording_origin.py), parsing leniently the way many real
/// origins do, so that anything ambiguous pinproxy forwards shows up.
final class RecordingOrigin: @unchecked Sendable {
    /// One line of the origin's event log.
    struct Event: Decodable, Sendable {
        var event: String
        var conn: Int
        var seq: Int?
        var method: String?
        var target: String?
        var body_length: Int?
        var fields: [String]?
        var reason: String?
    }

    let port: UInt16
    private let process: Process
    private let eventsFile: String
    private let rawDirectory: String

    init(certificateChain: String, key: String, directory: String) throws {
        let name = UUID().uuidString
        let readyFile = directory + "/origin-\(name).port"
        eventsFile = directory + "/origin-\(name).events"
        rawDirectory = directory + "/origin-\(name)-raw"
        try FileManager.default.createDirectory(atPath: rawDirectory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", ToolPaths.repositoryRoot + "/Tests/Tools/recording_origin.py",
                             "--cert", certificateChain, "--key", key, "--ready-file", readyFile,
                             "--events", eventsFile, "--raw-dir", rawDirectory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = ToolPaths.waitForFile(readyFile), let port = UInt16(line) else {
            process.terminate()
            throw TestFailure("recording_origin.py did not start")
        }
        self.port = port
    }

    deinit { stop() }

    /// Kills the origin (it also exits by itself when its parent is gone).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Every event logged so far, in order. Lines are decoded once and kept:
    /// suites ask after every case, and the log only grows.
    func events() -> [Event] {
        lock.lock()
        defer { lock.unlock() }
        guard let handle = FileHandle(forReadingAtPath: eventsFile) else { return decoded }
        defer { try? handle.close() }
        try? handle.seek(toOffset: consumedBytes)
        let fresh = (try? handle.readToEnd()) ?? Data()
        // Only whole lines: the origin may be writing the last one right now.
        guard let lastNewline = fresh.lastIndex(of: UInt8(ascii: "\n")) else { return decoded }
        let complete = fresh[fresh.startIndex...lastNewline]
        consumedBytes += UInt64(complete.count)
        decoded += complete.split(separator: UInt8(ascii: "\n")).compactMap {
            try? JSONDecoder().decode(Event.self, from: Data($0))
        }
        return decoded
    }

    private let lock = NSLock()
    private var consumedBytes: UInt64 = 0
    private var decoded: [Event] = []

    /// The parsed requests whose target contains `marker`.
    func requests(containing marker: String) -> [Event] {
        events().filter { $0.event == "request" && ($0.target ?? "").contains(marker) }
    }

    /// Every byte the origin received on connection `conn`.
    func rawBytes(of conn: Int) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: rawDirectory + "/conn-\(conn).bin")))) ?? []
    }
}

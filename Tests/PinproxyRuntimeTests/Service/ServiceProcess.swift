import Foundation

/// A real `pinproxy` (or a launcher that execs it) running as a child process,
/// with its stderr in a file, killed with SIGKILL if a test leaves it running.
///
/// Why a subprocess and not `ProxyUnderTest`: signals, `$NOTIFY_SOCKET`,
/// `LISTEN_FDS` and the exit code belong to the process, so only the shipped
/// binary can show what systemd will see.
final class ServiceProcess {
    /// `.build/debug/pinproxy`, found from this file's location.
    static var binary: String { ToolPaths.repositoryRoot + "/.build/debug/pinproxy" }

    let stderrPath: String
    private let process = Process()

    /// `environment` is added to this process's environment, from which any
    /// systemd variables (a test runner under systemd has them) are removed first.
    init(executable: String, arguments: [String], environment: [String: String],
         directory: String) throws {
        stderrPath = directory + "/stderr-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        var inherited = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID",
                    "LOGS_DIRECTORY"] {
            inherited[key] = nil
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = inherited.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// The exit status, or nil when the process is still running after `timeout`.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

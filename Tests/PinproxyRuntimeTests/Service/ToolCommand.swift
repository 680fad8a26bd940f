import Foundation

/// Runs a tool to completion (systemd-analyze, make, the check script) from the
/// repository root and captures its exit status, stdout and stderr separately.
enum ToolCommand {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Output goes through files, not pipes, so a chatty tool cannot fill a pipe
    /// and block; the process is killed after `timeout`.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    timeout: TimeInterval = 120) throws -> Result {
        let directory = try TemporaryDirectory()
        let outPath = directory.path + "/stdout", errPath = directory.path + "/stderr"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: ToolPaths.repositoryRoot)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}

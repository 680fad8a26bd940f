import Foundation

/// The real `pinproxy run` binary as a child process, for the faults that
/// need a process of its own: signals, `kill -9`, a descriptor limit, CPU time.
///
/// It is started through `/bin/sh -c '[ulimit -n N;] exec pinproxy run …'` so
/// a test can lower (or raise) the daemon's RLIMIT_NOFILE without touching the
/// test process; `exec` keeps the PID the daemon's. Stderr goes to a file the
/// test reads ("configuration generation N active" and friends).
final class P2Daemon {
    static var binary: String { ToolPaths.repositoryRoot + "/.build/debug/pinproxy" }

    let process: Process
    let stderrPath: String
    var pid: Int32 { process.processIdentifier }

    /// Starts the daemon on `configPath` and waits (bounded) for its
    /// "listening on" line; throws when it exits or stays silent instead.
    init(configPath: String, stderrPath: String, descriptorLimit: Int? = nil) throws {
        self.stderrPath = stderrPath
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else {
            throw TestFailure("cannot create \(stderrPath)")
        }
        let limit = descriptorLimit.map { "ulimit -n \($0); " } ?? ""
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(limit)exec \"$0\" run --config \"$1\"", Self.binary, configPath]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while !stderrText().contains("listening on") {
            guard process.isRunning, Date() < deadline else {
                kill(pid, SIGKILL)
                process.waitUntilExit()
                throw TestFailure("pinproxy did not start: \(stderrText())")
            }
            usleep(20_000)
        }
    }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    func signal(_ number: Int32) { kill(pid, number) }

    func stderrText() -> String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }

    /// Waits up to `timeout` for the process to end; its exit status, or nil if still running.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Open descriptors of the daemon (`/proc/PID/fd`).
    func descriptorCount() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    /// User + system CPU seconds the daemon has used (`/proc/PID/stat` fields 14 and 15).
    func cpuSeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return -1 }
        // Fields after "comm)" start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

import Foundation

/// The real `pinproxy run` binary as a child process, for the faults that
/// need a process of its own: signals, `kill -9`, a descriptor limit, CPU time.
///
/// It is started through a small python3 `exec` wrapper (the PID stays the
/// daemon's) that does what `/bin/sh -c 'ulimit -n N; exec pinproxy run …'`
/// would, plus one thing a shell cannot: the test runner's threads block
/// almost every signal, a child inherits that mask across exec, and a daemon
/// whose SIGHUP/SIGTERM are blocked never sees them (measured: SigBlk
/// fffffffe3bfbea27). So the wrapper empties the mask first, as a service
/// manager does (or, with `blockedSignals`, sets exactly that mask, to test
/// a daemon started by a careless parent). Stderr goes to a file the test reads ("configuration
/// generation N active" and friends).
final class P2Daemon {
    static var binary: String { ToolPaths.repositoryRoot + "/.build/debug/pinproxy" }

    let process: Process
    let stderrPath: String
    var pid: Int32 { process.processIdentifier }

    /// Starts the daemon on `configPath` and waits (bounded) for its
    /// "listening on" line; throws when it exits or stays silent instead.
    init(configPath: String, stderrPath: String, descriptorLimit: Int? = nil, blockedSignals: [Int32] = []) throws {
        self.stderrPath = stderrPath
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else {
            throw TestFailure("cannot create \(stderrPath)")
        }
        let limit = descriptorLimit.map { "resource.setrlimit(resource.RLIMIT_NOFILE, (\($0), resource.getrlimit(resource.RLIMIT_NOFILE)[1]))" } ?? ""
        let wrapper = """
            import os, resource, signal, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, \(blockedSignals))
            \(limit)
            os.execv(sys.argv[1], sys.argv[1:])
            """
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", wrapper, Self.binary, "run", "--config", configPath]
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

    /// Resident set size in bytes (`VmRSS` of `/proc/PID/status`), -1 when unreadable.
    func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kibibytes * 1024
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

import Foundation

/// One pinproxy service as systemd would run it: a config file in a temp dir
/// with a forward listener on a free loopback port and the violation log next
/// to it, a notify socket, and the real binary started with `--config`.
final class ServiceUnderTest {
    let directory: TemporaryDirectory
    let port: UInt16
    let configPath: String
    let notifications: NotifyListener
    private(set) var process: ChildProcess?

    /// `body` is the JSON5 configuration without `listeners` and `violation_log`.
    init(body: String) throws {
        directory = try TemporaryDirectory()
        port = ToolPaths.freePort()
        configPath = directory.path + "/pinproxy.json"
        notifications = try NotifyListener(directory: directory.path)
        try writeConfiguration(body: body)
    }

    var proxy: String { "http://127.0.0.1:\(port)" }
    var violationLogPath: String { directory.path + "/violations.jsonl" }

    /// Replaces the config file (what an operator does before `systemctl reload`).
    func writeConfiguration(body: String) throws {
        let text = """
        {
          "listeners": [ { "listen": "127.0.0.1:\(port)", "mode": "forward" } ],
          "violation_log": "\(violationLogPath)",
          \(body)
        }
        """
        // Written in place, not renamed: the daemon re-reads the path on SIGHUP.
        try Data(text.utf8).write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts `pinproxy run --config …` with `$NOTIFY_SOCKET` added to
    /// `options`, and waits for `READY=1`; returns the datagrams up to and including it.
    @discardableResult
    func start(_ options: ChildProcess.Options = .init(signalMask: .clean), readyTimeout: TimeInterval = 20) throws -> [String] {
        try launch(options)
        return try waitForReady(timeout: readyTimeout)
    }

    /// Starts pinproxy without waiting for anything (for a start that must fail).
    func launch(_ options: ChildProcess.Options = .init(signalMask: .clean)) throws {
        var options = options
        options.environment["NOTIFY_SOCKET"] = notifications.path
        process = try PinproxyBinary.start(["run", "--config", configPath], options: options)
    }

    /// Receives until the next `READY=1`; throws with pinproxy's exit status and
    /// stderr when none comes, early when the process has exited.
    @discardableResult
    func waitForReady(timeout: TimeInterval = 20) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var datagrams: [String] = []
        while Date() < deadline {
            datagrams += notifications.receive(until: { NotifyListener.states([$0]).contains("READY=1") }, timeout: 0.2)
            if NotifyListener.states(datagrams).last == "READY=1" { return datagrams }
            if let process, !process.isRunning { break }
        }
        let exit = process?.waitForExit(timeout: 0).map { "exit \($0)" } ?? "running"
        throw TestFailure("no READY=1 (\(exit), got \(datagrams)); stderr:\n\(process?.stderrText ?? "")")
    }

    /// The running process (the test failed to start one otherwise).
    func running() throws -> ChildProcess {
        guard let process else { throw TestFailure("pinproxy was not started") }
        return process
    }
}

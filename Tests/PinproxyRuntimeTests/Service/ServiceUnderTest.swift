import Foundation

/// One pinproxy service as systemd would run it, built on a `TestWorld`: the
/// world's configuration file (one forward listener on a free loopback port,
/// the violation log beside it), a notify socket, and the real binary started
/// with `--config`, `$NOTIFY_SOCKET` and an empty signal mask.
///
/// Why the binary and not `ProxyUnderTest`: signals, `$NOTIFY_SOCKET`,
/// `LISTEN_FDS` and the exit code belong to the process, so only the shipped
/// binary can show what systemd will see.
final class ServiceUnderTest {
    let world: TestWorld
    let notifications: NotifyListener
    private(set) var process: ChildProcess?

    /// `body` is more JSON5 members for the configuration (`"default_policy": "deny",`).
    init(body: String = "") throws {
        world = try TestWorld()
        world.configuration.extra = body
        notifications = try NotifyListener(directory: world.directory.path)
    }

    var port: UInt16 { world.forwardPort }
    var proxy: String { world.proxyURL }

    /// Rewrites the config file (what an operator does before `systemctl reload`).
    func writeConfiguration() throws {
        try world.writeConfiguration()
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
        process = try PinproxyBinary.start(["run", "--config", world.writeConfiguration()], options: options)
    }

    /// Receives until the next `READY=1`; throws with pinproxy's exit status and
    /// stderr when none comes, early when the process has exited.
    @discardableResult
    func waitForReady(timeout: TimeInterval = 20) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var datagrams: [String] = []
        // Blocking receives of at most 0.2 s, so an exit is noticed early.
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

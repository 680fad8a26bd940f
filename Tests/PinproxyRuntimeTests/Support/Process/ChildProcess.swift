import Foundation

/// A child process a test starts, talks to with signals, reads and waits on:
/// the `pinproxy` binary above all (`PinproxyBinary`), and the tools around it
/// (curl, openssl, make, systemd-analyze, the python peers).
///
/// Stdout and stderr go to files of the child's own, not pipes, so a chatty
/// child never blocks on a full pipe and a test can read either while the
/// child runs. The child is SIGKILLed when the value is released, so a failed
/// test leaves nothing running. Waiting for the exit is bounded and needs no
/// polling: Foundation reports the termination.
///
/// How the child starts is `Options`: its environment, and, through a python
/// exec wrapper where Foundation.Process cannot do it, its signal mask,
/// inherited listening sockets and descriptor limit (see `Options`).
final class ChildProcess: @unchecked Sendable {
    /// Which output file to read.
    enum Stream { case stdout, stderr }

    /// What a child that ran to completion left.
    struct Result {
        var status: Int32
        var output: String
        var errorOutput: String
        /// The non-empty lines of stdout.
        var outputLines: [String] { output.split(separator: "\n").map(String.init) }
        /// Stdout then stderr, for a message that must show whatever the child said.
        var combinedOutput: String { output + errorOutput }
    }

    /// What was asked to run (behind the wrapper, when there is one).
    let executable: String
    private let process = Process()
    private let outputs: TemporaryDirectory
    // Signalled once by Foundation's termination handler, then again by every
    // wait that took it, so it stays signalled after the exit.
    private let exited = DispatchSemaphore(value: 0)
    private var isLaunched = false

    /// Starts `executable arguments…` as `options` say.
    init(_ executable: String, _ arguments: [String] = [], options: Options = Options()) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestFailure("\(executable) is missing or not executable"
                              + (executable == PinproxyBinary.path ? ": run `swift build` first" : ""))
        }
        self.executable = executable
        outputs = try TemporaryDirectory()
        let command = options.command(running: executable, arguments)
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments
        process.environment = options.childEnvironment()
        if let directory = options.workingDirectory {
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try Self.outputFile(outputs.file("stdout"))
        process.standardError = try Self.outputFile(outputs.file("stderr"))
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        isLaunched = true
    }

    deinit { kill() }

    /// Runs `executable arguments…` to completion; throws, having killed it,
    /// when it is still running after `timeout`.
    static func run(_ executable: String, _ arguments: [String] = [], options: Options = Options(),
                    timeout: TimeInterval = 60) throws -> Result {
        let child = try ChildProcess(executable, arguments, options: options)
        guard let status = child.waitForExit(timeout: timeout) else {
            child.kill()
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) s;"
                              + " stderr:\n\(child.stderrText)")
        }
        return Result(status: status, output: child.stdoutText, errorOutput: child.stderrText)
    }

    /// Runs `/bin/sh -c command` to completion (the openssl CLI, mount, dd).
    static func shell(_ command: String, timeout: TimeInterval = 60) throws -> Result {
        try run("/bin/sh", ["-c", command], timeout: timeout)
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var stdoutText: String { contents(of: outputs.file("stdout")) }
    var stderrText: String { contents(of: outputs.file("stderr")) }

    func text(of stream: Stream) -> String { stream == .stdout ? stdoutText : stderrText }

    func send(_ signal: Int32) { Glibc.kill(pid, signal) }

    /// SIGKILL, then waits for the exit (nothing to do once it has ended).
    func kill() {
        guard isLaunched else { return }
        if process.isRunning { Glibc.kill(pid, SIGKILL) }
        _ = waitForExit(timeout: 10)
    }

    /// The exit status (the signal number for a child a signal ended), or nil
    /// when the child is still running after `timeout`.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        exited.signal()
        return process.terminationStatus
    }

    /// Waits until `find` finds what it looks for in `stream` and returns it.
    /// Throws, with the child's stderr, when the child exits first or
    /// `timeout` passes, and kills it then: a daemon that did not come up is
    /// of no use to the test.
    func waitForOutput<Found>(on stream: Stream = .stderr, timeout: TimeInterval = 15,
                              _ find: (String) -> Found?) throws -> Found {
        let found = eventually(timeout: timeout, { find(text(of: stream)) }, until: { $0 != nil || !isRunning })
        // The line may have been written just before the exit ended the wait.
        if let found = found ?? find(text(of: stream)) { return found }
        let state = (isRunning ? nil : waitForExit(timeout: 1)).map { "exited with \($0)" } ?? "still running after \(timeout) s"
        kill()
        throw TestFailure("\((executable as NSString).lastPathComponent) \(state) before its \(stream) said so; stderr:\n\(stderrText)")
    }

    /// Waits until stderr contains `text` (pinproxy's "listening on"); throws as `waitForOutput` does.
    func waitForStderr(containing text: String, timeout: TimeInterval = 15) throws {
        _ = try waitForOutput(on: .stderr, timeout: timeout) { $0.contains(text) ? true : nil }
    }

    private static func outputFile(_ path: String) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw TestFailure("cannot create \(path)") }
        return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }
}

internal import CProcess
import Foundation
@testable import PinproxyRuntime

/// A child process a test starts, talks to with signals, reads and waits on:
/// the `pinproxy` binary above all (`PinproxyBinary`), and the tools around it
/// (curl, openssl, make, systemd-analyze, the python peers).
///
/// Stdout and stderr go to files of the child's own, not pipes, so a chatty
/// child never blocks on a full pipe and a test can read either while the
/// child runs. The child is SIGKILLed when the value is released, so a failed
/// test leaves nothing running. Waiting for the exit is bounded and needs no
/// polling: a thread of the child's own waits for it.
///
/// Why posix_spawn and not Foundation.Process: Swift 6.3.1's Process.run()
/// lists /proc/self/fd copying all 256 bytes of each entry's `d_name`, past
/// the end of a short record at the end of readdir's buffer
/// (swift-corelibs-foundation PR #5472), and crashes, now and then, once the
/// runner holds the ~1,800 descriptors a full run does (seen in `make test`:
/// "Bad pointer dereference" in Process.run). The child here is started as
/// Process started it: in a process group of its own, the spawning thread's
/// signal mask, stdin from /dev/null, and no descriptor but 0-2 (closefrom).
///
/// How the child starts is `Options`: its environment, and, through a python
/// exec wrapper where a plain spawn cannot do it, its signal mask, inherited
/// listening sockets and descriptor limit (see `Options`).
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
    let pid: Int32
    private let outputs: TemporaryDirectory
    /// The exit status once the child has ended (the signal number for a
    /// child a signal ended); nil while it may still run, and until then its
    /// pid cannot be reused, so a signal sent under this lock reaches it.
    /// (`Locked`, not `Mutex`: the thread sanitizer cannot see `Mutex`'s ordering.)
    private let ending = Locked<Int32?>(nil)
    // Signalled once by the waiting thread, then again by every wait that
    // took it, so it stays signalled after the exit.
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `executable arguments…` as `options` say.
    init(_ executable: String, _ arguments: [String] = [], options: Options = Options()) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestFailure("\(executable) is missing or not executable"
                              + (executable == PinproxyBinary.path ? ": run `swift build` first" : ""))
        }
        self.executable = executable
        outputs = try TemporaryDirectory()
        // There before the child starts, so a test reads "" rather than a missing file.
        for name in ["stdout", "stderr"] where !FileManager.default.createFile(atPath: outputs.file(name), contents: nil) {
            throw TestFailure("cannot create \(outputs.file(name))")
        }
        let command = options.command(running: executable, arguments)
        pid = try Self.spawn(command.executable, command.arguments, environment: options.childEnvironment(),
                             workingDirectory: options.workingDirectory,
                             stdout: outputs.file("stdout"), stderr: outputs.file("stderr"))
        let thread = Thread { [pid, ending, exited] in
            // Wait without reaping, record the ending under the lock, then
            // reap: no signal sent under the lock can reach a reused pid.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
            ending.withLock { ending in
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                ending = shim_WIFSIGNALED(status) != 0 ? shim_WTERMSIG(status) : shim_WEXITSTATUS(status)
            }
            exited.signal()
        }
        thread.name = "child-\(pid)"
        thread.start()
    }

    private static func spawn(_ executable: String, _ arguments: [String], environment: [String: String],
                              workingDirectory: String?, stdout: String, stderr: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The runner's sockets stay with the runner: a child holding a copy
        // would keep a peer from ever seeing a close.
        shim_posix_spawn_file_actions_addclosefrom(&actions, 3)
        if let workingDirectory { shim_posix_spawn_file_actions_addchdir(&actions, workingDirectory) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw TestFailure("posix_spawn \(executable): \(String(cString: strerror(status)))") }
        return child
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

    var isRunning: Bool { ending.withLock { $0 == nil } }
    var stdoutText: String { contents(of: outputs.file("stdout")) }
    var stderrText: String { contents(of: outputs.file("stderr")) }

    func text(of stream: Stream) -> String { stream == .stdout ? stdoutText : stderrText }

    /// Sends `signal` unless the child has ended (its pid may be another's by then).
    func send(_ signal: Int32) {
        ending.withLock { if $0 == nil { _ = Glibc.kill(pid, signal) } }
    }

    /// SIGKILL, then waits for the exit (nothing to do once it has ended).
    func kill() {
        send(SIGKILL)
        _ = waitForExit(timeout: 10)
    }

    /// The exit status (the signal number for a child a signal ended), or nil
    /// when the child is still running after `timeout`.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        exited.signal()
        return ending.withLock { $0 }
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
}

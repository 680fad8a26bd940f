internal import CLibevent
internal import CProcess
import Foundation
import PinproxyCore

/// One run of a custom policy's command on an event loop, never blocking it:
/// the chain is written to its standard input and its standard output read
/// through non-blocking pipes, its exit seen through a pidfd, and a timer
/// kills it when `timeout` runs out. `completion` runs once, on the loop,
/// after the child is reaped.
///
/// The child runs in a process group of its own with an empty signal mask,
/// SIGPIPE back to its default (the daemon ignores it, and an ignored signal
/// stays ignored across exec), only descriptors 0, 1 and 2 open (stderr is
/// the daemon's, so a checker's complaints reach the journal), and only the
/// request's environment. Whatever it leaves behind in its group is killed
/// when it exits or times out, so a checker cannot leave a sleeper holding
/// the pipe.
final class CustomCheckProcess {
    private let loop: EventLoop
    private let request: CustomCheckRequest
    private var completion: ((CustomVerdict) -> Void)?

    private var pid: pid_t = 0
    private var pidDescriptor: Int32 = -1
    private var inputDescriptor: Int32 = -1
    private var outputDescriptor: Int32 = -1
    private var exitWatch: DescriptorWatch?
    private var inputWatch: DescriptorWatch?
    private var outputWatch: DescriptorWatch?
    private var timer: Timer?
    private var inputWritten = 0
    /// The first line of output so far (at most `CustomVerdict.maximumLineBytes` bytes kept).
    private var firstLine: [UInt8] = []
    private var firstLineComplete = false
    private var timedOut = false
    /// What each read of the output lands in, kept for the run.
    private var outputBuffer = [UInt8](repeating: 0, count: 16 * 1024)

    /// Bytes of output read after the exit, at most: a grandchild that kept
    /// the pipe and writes on must not keep the loop busy.
    private static let drainAfterExit = 1 << 20

    init(loop: EventLoop, request: CustomCheckRequest, completion: @escaping (CustomVerdict) -> Void) {
        self.loop = loop
        self.request = request
        self.completion = completion
    }

    deinit {
        // Only when the executor itself goes away with a child running.
        if pid > 0 {
            killGroup()
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        closeDescriptors()
    }

    /// Starts the child; a command that cannot be started completes at once
    /// (on the loop's next turn, never inside this call).
    func start() {
        do {
            try spawn()
        } catch {
            closeDescriptors()
            let detail = "cannot start \(request.command.first ?? "the command"): \(error)"
            let bound = LoopBound(self)
            loop.execute { bound.value.finish(.failed(detail: detail)) }
            return
        }
        guard let exitWatch = DescriptorWatch(loop: loop, descriptor: pidDescriptor, action: { [unowned self] in childExited() }),
              let outputWatch = DescriptorWatch(loop: loop, descriptor: outputDescriptor, action: { [unowned self] in readOutput() }),
              let inputWatch = DescriptorWatch(loop: loop, descriptor: inputDescriptor, writable: true,
                                               action: { [unowned self] in writeInput() }) else {
            killGroup()
            return reapBlocking(detail: "cannot watch the command: out of memory")
        }
        self.exitWatch = exitWatch
        self.outputWatch = outputWatch
        self.inputWatch = inputWatch
        exitWatch.arm()
        outputWatch.arm()
        writeInput()
        let timer = Timer(loop: loop) { [unowned self] in
            timedOut = true
            killGroup()
        }
        timer.schedule(after: request.timeout)
        self.timer = timer
    }

    // MARK: the child

    private func spawn() throws {
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        guard shim_pipe2(&input, O_CLOEXEC) == 0 else { throw RuntimeError.system("pipe2", errno) }
        inputDescriptor = input[1]
        guard shim_pipe2(&output, O_CLOEXEC) == 0 else {
            close(input[0])
            throw RuntimeError.system("pipe2", errno)
        }
        outputDescriptor = output[0]
        defer { close(input[0]); close(output[1]) }
        for descriptor in [inputDescriptor, outputDescriptor] {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        // Every other descriptor (client and upstream sockets, logs) stays with the daemon.
        shim_posix_spawn_file_actions_addclosefrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = request.command.map { strdup($0) } + [nil]
        let envp = request.environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, request.command[0], &actions, &attributes, argv, envp)
        guard status == 0 else { throw RuntimeError.message(String(cString: strerror(status))) }
        pid = child
        pidDescriptor = shim_pidfd_open(child)
        guard pidDescriptor >= 0 else {
            let error = errno
            killGroup()
            var ignored: Int32 = 0
            _ = waitpid(child, &ignored, 0)
            pid = 0
            throw RuntimeError.system("pidfd_open", error)
        }
    }

    /// SIGKILL to the child's whole group. Safe until the child is reaped:
    /// until then its pid (the group's id) cannot be reused.
    private func killGroup() {
        guard pid > 0 else { return }
        _ = kill(-pid, SIGKILL)
    }

    private func writeInput() {
        guard inputDescriptor >= 0 else { return }
        while inputWritten < request.input.count {
            let written = request.input.withUnsafeBytes { bytes in
                write(inputDescriptor, bytes.baseAddress! + inputWritten, bytes.count - inputWritten)
            }
            if written > 0 {
                inputWritten += written
                continue
            }
            if written < 0, errno == EAGAIN || errno == EINTR {
                inputWatch?.arm()
                return
            }
            // EPIPE: the command does not read its input; its exit status still decides.
            break
        }
        closeInput()
    }

    private func closeInput() {
        retire(inputWatch)
        inputWatch = nil
        if inputDescriptor >= 0 { close(inputDescriptor) }
        inputDescriptor = -1
    }

    /// Reads what the pipe holds (up to `limit` bytes); keeps the first
    /// line, drops the rest (a chatty command must not fill the pipe and stall).
    private func readOutput(atMost limit: Int = .max) {
        guard outputDescriptor >= 0 else { return }
        var total = 0
        while total < limit {
            let count = outputBuffer.withUnsafeMutableBytes { read(outputDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                total += count
                keepFirstLine(outputBuffer[0..<count])
            } else if count < 0, errno == EINTR {
                continue
            } else {
                // End of output (the watch stops) or EAGAIN (it fires again when more comes).
                if count == 0 { outputWatch?.disarm() }
                return
            }
        }
    }

    private func keepFirstLine(_ bytes: ArraySlice<UInt8>) {
        guard !firstLineComplete else { return }
        let end = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
        firstLine.append(contentsOf: bytes[bytes.startIndex..<end].prefix(CustomVerdict.maximumLineBytes - firstLine.count))
        if end != bytes.endIndex || firstLine.count >= CustomVerdict.maximumLineBytes { firstLineComplete = true }
    }

    private func childExited() {
        exitWatch?.disarm()
        // The leader is a zombie, so its group id is still its own: kill what it left.
        killGroup()
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        pid = 0
        readOutput(atMost: Self.drainAfterExit)
        closeDescriptors()
        guard reaped > 0 else { return finish(.failed(detail: "the command's exit status could not be read")) }
        finish(verdict(status))
    }

    /// Only when the loop cannot watch the child: it was just killed, so the wait is short.
    private func reapBlocking(detail: String) {
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        pid = 0
        closeDescriptors()
        let bound = LoopBound(self)
        loop.execute { bound.value.finish(.failed(detail: detail)) }
    }

    private func verdict(_ status: Int32) -> CustomVerdict {
        let line = CustomVerdict.firstLine(of: firstLine)
        if timedOut { return .failed(detail: "the custom command timed out after \(DurationSyntax.format(request.timeout))") }
        if shim_WIFEXITED(status) != 0 {
            switch shim_WEXITSTATUS(status) {
            case 0: return .accepted(output: line)
            case 1: return .rejected(output: line)
            case let code: return .failed(detail: "the custom command exited with status \(code)" + (line.isEmpty ? "" : ": \(line)"))
            }
        }
        if shim_WIFSIGNALED(status) != 0 {
            let signal = shim_WTERMSIG(status)
            let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
            return .failed(detail: "the custom command was killed by signal \(signal) (\(name))")
        }
        return .failed(detail: "the custom command ended with wait status \(status)")
    }

    private func finish(_ verdict: CustomVerdict) {
        timer?.cancel()
        let completion = self.completion
        self.completion = nil
        // The completion may drop the last reference to this object.
        withExtendedLifetime(self) { completion?(verdict) }
    }

    /// Stops `watch` and frees it on the loop's next turn: this may run inside its own callback.
    private func retire(_ watch: DescriptorWatch?) {
        guard let watch else { return }
        watch.disarm()
        let retired = LoopBound(watch)
        loop.execute { withExtendedLifetime(retired) {} }
    }

    /// Closes every descriptor (the watches first).
    private func closeDescriptors() {
        retire(exitWatch)
        retire(outputWatch)
        exitWatch = nil
        outputWatch = nil
        closeInput()
        if outputDescriptor >= 0 { close(outputDescriptor) }
        outputDescriptor = -1
        if pidDescriptor >= 0 { close(pidDescriptor) }
        pidDescriptor = -1
    }
}

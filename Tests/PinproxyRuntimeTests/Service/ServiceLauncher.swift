import Foundation

/// How the test starts pinproxy: through a few lines of Python that set up
/// what systemd sets up for a service, then `execv` the binary, so that the
/// pid the daemon sees is the launcher's.
///
/// Why a launcher: Foundation.Process cannot set `LISTEN_PID` to the child's
/// own pid, cannot place a socket at fd 3, and passes on the signal mask of the
/// test thread that spawns it (Dispatch's threads block most signals), whereas
/// systemd starts services with an empty mask.
struct ServiceLauncher {
    /// The signal mask the daemon starts with.
    enum SignalMask {
        /// Empty, as systemd leaves it.
        case clean
        /// SIGHUP, SIGTERM, SIGINT and SIGUSR1 blocked, as a careless parent may leave them.
        case handledSignalsBlocked
    }

    /// A listening socket the launcher binds on 127.0.0.1 and passes as fd 3.
    struct ActivatedSocket {
        var port: UInt16
        /// `LISTEN_PID` names the daemon itself (false: another pid, as when a
        /// child inherited the variables from its parent).
        var listenPIDIsDaemon = true
    }

    var signalMask: SignalMask = .clean
    var activatedSocket: ActivatedSocket?

    static let script = """
    import os, signal, socket, sys
    mask, port, pid_mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    handled = {signal.SIGHUP, signal.SIGTERM, signal.SIGINT, signal.SIGUSR1}
    signal.pthread_sigmask(signal.SIG_SETMASK, handled if mask == "blocked" else set())
    if port:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        if listener.fileno() != 3:
            os.dup2(listener.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ["LISTEN_FDS"] = "1"
        os.environ["LISTEN_FDNAMES"] = "forward"
        os.environ["LISTEN_PID"] = str(os.getpid() if pid_mode == "self" else 1)
    os.execv(sys.argv[4], sys.argv[4:])
    """

    /// The executable and arguments that run `binary arguments…` this way.
    func command(binary: String, arguments: [String]) -> (executable: String, arguments: [String]) {
        let mask = signalMask == .clean ? "clean" : "blocked"
        let port = activatedSocket.map { String($0.port) } ?? "0"
        let pidMode = activatedSocket?.listenPIDIsDaemon == false ? "other" : "self"
        return ("/usr/bin/env", ["python3", "-c", Self.script, mask, port, pidMode, binary] + arguments)
    }
}

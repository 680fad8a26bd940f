import Foundation

extension ChildProcess {
    /// How a child starts: its environment and working directory, and what a
    /// service manager or a careless parent would hand it (signal mask,
    /// inherited listening sockets, descriptor limit).
    ///
    /// Why a python exec wrapper for the last three: the spawn (as
    /// Foundation.Process's did) passes on the signal mask of the thread that
    /// spawns it (the test runner's threads block almost every signal,
    /// measured SigBlk fffffffe3bfbea27, so
    /// a daemon that relied on it would never see SIGHUP or SIGTERM); it
    /// cannot place a socket at fd 3; it cannot set `LISTEN_PID` to the
    /// child's own pid, which exists only after the fork; and it cannot set an
    /// rlimit in the child. A few lines of python do what systemd (or
    /// `ulimit -n N; exec …`) does and then `execv` the executable, so the pid
    /// the test holds, signals and reads in `/proc` is the executable's own.
    /// Without any of the three the executable is started directly.
    struct Options {
        /// The signal mask the child starts with.
        enum SignalMask: Equatable {
            /// Whatever the spawning test thread has (Foundation.Process's behaviour, kept).
            case inherited
            /// Empty, as systemd starts a service.
            case clean
            /// Exactly these blocked, as a careless parent may leave them.
            case blocking([Int32])
        }

        /// A listening socket on 127.0.0.1:`port` the wrapper binds and passes
        /// as fd 3, 4, … in order, named in `LISTEN_FDNAMES` (sd_listen_fds(3)).
        struct ActivatedSocket {
            var port: UInt16
            var name = "forward"
        }

        /// Whose pid `LISTEN_PID` names.
        enum ListenPID: Equatable {
            /// The child's own: the sockets are for it.
            case child
            /// Another process's, as when a child inherited the variables from its parent.
            case other(Int32)
        }

        var signalMask: SignalMask = .inherited
        var activatedSockets: [ActivatedSocket] = []
        var listenPID: ListenPID = .child
        /// The soft `RLIMIT_NOFILE` (the hard limit stays).
        var descriptorLimit: Int?
        /// Added to this process's environment, from which systemd's variables are removed first.
        var environment: [String: String] = [:]
        var workingDirectory: String?

        /// Tools that take paths relative to the repository (make, the unit checks).
        static var inRepository: Options { Options(workingDirectory: ToolPaths.repositoryRoot) }

        /// What a test runner under systemd would pass on and a child must
        /// not mistake for its own service manager's.
        static let systemdVariables = ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
                                       "WATCHDOG_USEC", "WATCHDOG_PID", "LOGS_DIRECTORY", "STATE_DIRECTORY"]

        func childEnvironment() -> [String: String] {
            var inherited = ProcessInfo.processInfo.environment
            for key in Self.systemdVariables { inherited[key] = nil }
            return inherited.merging(environment) { $1 }
        }

        var needsWrapper: Bool { signalMask != .inherited || !activatedSockets.isEmpty || descriptorLimit != nil }

        /// The executable and arguments that start `executable arguments…` this way.
        func command(running executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
            guard needsWrapper else { return (executable, arguments) }
            return ("/usr/bin/env", ["python3", "-c", Self.wrapper, specification, executable] + arguments)
        }

        /// This configuration as the wrapper's first argument (JSON).
        private var specification: String {
            let mask: [Int32]? = switch signalMask {
            case .inherited: nil
            case .clean: []
            case .blocking(let signals): signals
            }
            let listenPID: Int32? = switch self.listenPID {
            case .child: nil
            case .other(let pid): pid
            }
            let object: [String: Any] = [
                "mask": mask.map { $0 as Any } ?? NSNull(),
                "ports": activatedSockets.map { Int($0.port) },
                "names": activatedSockets.map(\.name),
                "listen_pid": listenPID.map { $0 as Any } ?? NSNull(),
                "nofile": descriptorLimit.map { $0 as Any } ?? NSNull(),
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }

        /// argv: the specification, then the executable and its arguments.
        /// Sockets are bound first and moved above fd 100 before they are
        /// placed at 3, 4, …, so that placing one never closes another; the
        /// descriptor limit comes last, once no more descriptors are needed.
        static let wrapper = """
        import fcntl, json, os, resource, signal, socket, sys
        spec = json.loads(sys.argv[1])
        if spec["mask"] is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, spec["mask"])
        if spec["ports"]:
            parked = []
            for port in spec["ports"]:
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.bind(("127.0.0.1", port))
                listener.listen(128)
                parked.append(fcntl.fcntl(listener.fileno(), fcntl.F_DUPFD, 100))
                listener.close()
            for index, fd in enumerate(parked):
                os.dup2(fd, 3 + index)
                os.close(fd)
            os.environ["LISTEN_FDS"] = str(len(parked))
            os.environ["LISTEN_FDNAMES"] = ":".join(spec["names"])
            os.environ["LISTEN_PID"] = str(os.getpid() if spec["listen_pid"] is None else spec["listen_pid"])
        if spec["nofile"] is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (spec["nofile"], resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        os.execv(sys.argv[2], sys.argv[2:])
        """
    }
}

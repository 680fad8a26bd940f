import Foundation
import PinproxyCore
import Synchronization

/// The daemon: N event loops (one per `threads`), each accepting on the
/// process's one socket per listen address (`ListeningSockets`), with its own
/// pool and sessions; the first loop runs on the calling thread and also owns
/// signals, reload, the listening sockets, the watchdog and flood summaries.
///
/// Reload (SIGHUP) is parse → validate → build (off the loops) → swap on
/// every loop → bump the generation; a failed reload keeps the old configuration. Shutdown
/// (SIGTERM/SIGINT) is stop accepting → STOPPING=1 → let exchanges finish for
/// up to `timeouts.shutdown` → exit 0.
public final class Daemon: @unchecked Sendable {
    /// Everything a daemon needs besides its configuration.
    public struct Options: Sendable {
        /// The file to re-read on SIGHUP; nil when running on built-in defaults.
        public var configPath: String?
        public var environment: [String: String]
        /// Install SIGHUP/SIGTERM/SIGINT/SIGUSR1 handlers (off for in-process tests).
        public var handlesSignals: Bool
        /// pinproxy's version, for `pinproxy_build_info` and `/status`.
        public var version: String
        public init(configPath: String?, environment: [String: String], handlesSignals: Bool = true,
                    version: String = "unknown") {
            self.configPath = configPath
            self.environment = environment
            self.handlesSignals = handlesSignals
            self.version = version
        }
    }

    let options: Options
    let logger: Logger
    let shared: SharedDaemonState
    let workers: [LoopWorker]
    let sockets: ListeningSockets
    var generation = 1
    private var signalSources: [SignalSource] = []
    private var housekeeping: Timer?
    private var watchdog: Timer?
    private var shutdownTimer: Timer?
    /// Loop 0's state during a shutdown: the loops whose drain has not finished.
    private var loopsDraining = 0
    let notifier: SystemdNotifier?
    private let ready = DispatchSemaphore(value: 0)
    private let finishedThreads = DispatchGroup()
    let stopping = Atomic<Bool>(false)
    /// Loop 0's state: a build is under way; another SIGHUP came meanwhile.
    var reloadInProgress = false
    var reloadPending = false
    /// `admin.listen` (SPEC §6), on loop 0; nil without one.
    var adminServer: AdminServer?
    /// Once a day: the drift warnings (`Daemon+Drift`).
    var driftTimer: Timer?

    /// Builds the first generation, opens the violation log and binds every
    /// listener. Throws `DaemonStartError` naming what failed.
    public init(configuration: Configuration, options: Options, logger: Logger = .shared,
                sink: ViolationSink? = nil) throws(DaemonStartError) {
        self.options = options
        self.logger = logger
        notifier = SystemdNotifier(environment: options.environment)
        let loopCount = max(1, configuration.threads)
        let metrics = MetricsRegistry(loops: loopCount)
        let active: ActiveConfiguration
        do {
            active = try ActiveConfiguration(configuration: configuration, generation: 1, configPath: options.configPath,
                                             metrics: metrics)
        } catch {
            throw .invalidConfiguration("\(error)")
        }
        active.warnings(at: Date()).forEach { logger.log(.warning, "config", $0) }
        let file: ViolationLogFile
        do {
            file = try ViolationLogFile(path: configuration.violationLogPath, logger: logger)
        } catch {
            throw .runtime("\(error)")
        }
        var accessLog: AccessLogFile?
        if let path = configuration.accessLogPath {
            do {
                accessLog = try AccessLogFile(path: path, logger: logger)
            } catch {
                file.close()
                throw .runtime("$.access_log: \(error)")
            }
        }
        shared = SharedDaemonState(logger: logger,
                                   violations: ViolationRecorder(file: file, sink: sink, burst: configuration.logBurst),
                                   metrics: metrics, accessLog: accessLog)
        sockets = ListeningSockets(inherited: SocketActivation.inheritedListeners(environment: options.environment))
        let (descriptors, failures) = sockets.update(for: configuration.listeners, added: configuration.listeners,
                                                     loops: loopCount)
        var built: [LoopWorker] = []
        do {
            if let failure = failures.first { throw failure }
            let unmatched = sockets.unadopted
            if !unmatched.isEmpty {
                throw SocketActivationMismatch(unmatched: unmatched,
                                               listeners: configuration.listeners.map { "\($0.address)" })
            }
            for index in 0..<loopCount {
                let worker = try LoopWorker(index: index, configuration: active, shared: shared,
                                            resolvConf: options.environment["PINPROXY_RESOLV_CONF"])
                try worker.startListeners(descriptors[index])
                built.append(worker)
            }
        } catch {
            descriptors.dropFirst(built.count).forEach { $0.values.forEach { close($0.descriptor) } }
            sockets.closeAll()
            sockets.closeUnadopted()
            file.close()
            accessLog?.close()
            throw .runtime("\(error)")
        }
        workers = built
        if let admin = configuration.admin {
            do {
                try startAdmin(admin)
            } catch {
                sockets.closeAll()
                file.close()
                accessLog?.close()
                throw .runtime("$.admin.listen: \(error)")
            }
        }
        for rule in configuration.policies.rules where rule.policy.kind == .disable {
            logger.log(.warning, "config", "\(rule.key): policy \"disable\": no certificate evaluation at all for this host")
        }
    }

    /// `ip:port` of every listener of the first loop, as bound.
    public var listenAddresses: [String] { workers[0].boundAddresses }

    /// Runs until shutdown; returns the process exit code (0 after a drain).
    public func run() -> Int32 {
        // Writing to a peer that has gone must be an EPIPE the session handles,
        // never a signal that kills the process: sockets are written by
        // libevent, by OpenSSL's socket BIO and directly
        // (`PlainStream`'s writev), none of which passes MSG_NOSIGNAL. Even
        // when the host process keeps its other signals (an embedded daemon).
        signal(SIGPIPE, SIG_IGN)
        AllocatorTuning.apply(environment: options.environment)
        let main = workers[0]
        for worker in workers.dropFirst() {
            finishedThreads.enter()
            let bound = LoopBound(worker)
            Thread.startNamed("pinproxy-loop") { [finishedThreads] in
                // The worker lives on this thread from here on.
                bound.value.loop.run()
                finishedThreads.leave()
            }
        }
        if options.handlesSignals { installSignals(on: main.loop) }
        housekeeping = Timer(loop: main.loop) { [unowned self] in self.doHousekeeping() }
        housekeeping?.schedule(after: .seconds(5))
        scheduleDriftCheck()
        if let interval = SystemdNotifier.watchdogInterval(environment: options.environment), let notifier {
            watchdog = Timer(loop: main.loop) { [unowned self] in
                notifier.watchdog()
                self.watchdog?.schedule(after: interval)
            }
            watchdog?.schedule(after: interval)
        }
        logger.log(.info, "daemon", "listening on \(listenAddresses.joined(separator: ", ")) with \(workers.count) event loop(s), config generation \(generation)")
        notifier?.ready(status: statusLine())
        ready.signal()
        main.loop.run()
        finishedThreads.wait()
        shared.violations.flushSummaries(now: Date(), closingAll: true)
        shared.violations.close()
        shared.accessLog?.close()
        signalSources.removeAll()
        logger.log(.info, "daemon", "stopped")
        return 0
    }

    /// Blocks until `run()` has bound everything and started serving (tests).
    public func waitUntilReady() { ready.wait(); ready.signal() }

    /// Starts the drain from any thread (what SIGTERM does).
    public func requestShutdown() {
        workers[0].loop.execute { [self] in beginShutdown() }
    }

    /// The handlers first, then the unblock (`DaemonSignals`): a signal that
    /// came during start-up is held until here and handled, not fatal.
    private func installSignals(on loop: EventLoop) {
        defer { DaemonSignals.deliverToHandlers() }
        signalSources = [
            SignalSource(loop: loop, signal: SIGHUP) { [unowned self] in self.reload() },
            SignalSource(loop: loop, signal: SIGTERM) { [unowned self] in self.beginShutdown() },
            SignalSource(loop: loop, signal: SIGINT) { [unowned self] in self.beginShutdown() },
            SignalSource(loop: loop, signal: SIGUSR1) { [unowned self] in
                self.logger.log(.info, "log", "SIGUSR1: reopening the violation log")
                self.shared.violations.flushSummaries(now: Date(), closingAll: true)
                self.shared.violations.reopen()
                self.shared.accessLog?.reopen()
            },
        ]
    }

    private func beginShutdown() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        logger.log(.info, "daemon", "shutting down: no new connections, finishing in-flight requests")
        notifier?.stopping()
        // The loops close their own descriptors as they drain; the socket closes with the last.
        sockets.closeAll()
        adminServer?.close()
        adminServer = nil
        driftTimer?.cancel()
        driftTimer = nil
        let timeout = workers[0].configuration.timeouts.shutdown
        shutdownTimer = Timer(loop: workers[0].loop) { [unowned self] in
            self.logger.log(.warning, "daemon", "shutdown timeout: closing remaining connections")
            for worker in self.workers {
                let bound = LoopBound(worker)
                worker.loop.execute {
                    bound.value.closeAllSessions()
                    bound.value.loop.stop()
                }
            }
        }
        shutdownTimer?.schedule(after: timeout)
        // Loop 0 runs until every loop has drained, or the timeout fires:
        // it holds the shutdown timer (and the signals and the watchdog), so
        // stopping it with its own drain would leave the other loops' last
        // exchanges without a timeout.
        loopsDraining = workers.count
        let main = LoopBound(self)
        for (index, worker) in workers.enumerated() {
            let bound = LoopBound(worker)
            worker.loop.execute {
                bound.value.drain {
                    if index > 0 { bound.value.loop.stop() }
                    main.value.workers[0].loop.execute { main.value.loopDrained() }
                }
            }
        }
    }

    /// On loop 0: one loop finished its drain; the last one stops loop 0.
    private func loopDrained() {
        loopsDraining -= 1
        guard loopsDraining == 0 else { return }
        shutdownTimer?.cancel()
        workers[0].loop.stop()
    }

    private func doHousekeeping() {
        shared.violations.flushSummaries(now: Date(), closingAll: false)
        notifier?.status(statusLine())
        housekeeping?.schedule(after: .seconds(5))
    }

    func statusLine() -> String {
        "generation \(generation), \(shared.openConnections.load(ordering: .relaxed)) connections, "
            + "\(shared.violations.recordedCount.load(ordering: .relaxed)) violations"
    }
}

/// Why the daemon could not start: exit code 1 for a configuration that
/// validates but cannot be built (e.g. an unreadable pin file), 3 for the machine.
public enum DaemonStartError: Error, CustomStringConvertible {
    case invalidConfiguration(String)
    case runtime(String)

    public var exitCode: Int32 {
        switch self {
        case .invalidConfiguration: return 1
        case .runtime: return 3
        }
    }

    public var description: String {
        switch self {
        case let .invalidConfiguration(text), let .runtime(text): return text
        }
    }
}

// Socket declarations through the libevent module, whose shim includes the
// libc socket headers first: which C module owns those declarations depends
// on the build (WMO or batches), and through Foundation alone they were
// missing in some builds.
internal import CLibevent
import Foundation
import PinproxyCore
import Synchronization

/// State shared by every loop of one daemon.
final class SharedDaemonState: @unchecked Sendable {
    let logger: Logger
    let violations: ViolationRecorder
    let openConnections = Atomic<Int>(0)
    let metrics: MetricsRegistry
    /// `access_log`; nil when off (the default).
    let accessLog: AccessLogFile?
    let startedAt = Date()

    init(logger: Logger, violations: ViolationRecorder, metrics: MetricsRegistry, accessLog: AccessLogFile? = nil) {
        self.logger = logger
        self.violations = violations
        self.metrics = metrics
        self.accessLog = accessLog
    }
}

/// A descriptor of one of the process's listening sockets, handed to one loop.
struct ListenerDescriptor: Sendable {
    /// Owned by whoever holds this value: the loop closes it or gives it to a `Listener`.
    var descriptor: Int32
    var boundAddress: SocketAddress
    /// `ListeningSocket.acceptDeferral` of the socket this duplicates.
    var acceptDeferral: Duration
}

/// One event loop and everything that lives on it: its listeners (each on its
/// own duplicate of the process's socket for that address, `ListeningSocket`),
/// client sessions, resolver, upstream pool and TLS sessions. Nothing here is
/// touched from another thread except through `loop.execute`.
final class LoopWorker: IdleSocketDelegate {
    let loop: EventLoop
    /// Which lane of every counter this loop writes (SPEC §6).
    let index: Int
    let resolver: DNSResolver
    let pool: UpstreamPool
    let shared: SharedDaemonState
    private(set) var configuration: ActiveConfiguration
    private(set) var isDraining = false
    private var listeners: [ListenerConfiguration: Listener] = [:]
    private var sessions: [ObjectIdentifier: ClientSession] = [:]
    /// Accepted connections that have not sent anything yet, by their socket.
    private var waiting: [ObjectIdentifier: WaitingClient] = [:]
    private var drainCompletion: (() -> Void)?
    /// Denied requests' log lines on this loop (SPEC §6).
    let deniedLog = LogRateLimiter(subsystem: "http", what: "denied requests")
    /// The one buffer of `SessionAction`s that sessions on this loop handle
    /// their events into, lent to each for one `handle` (an idle keep-alive
    /// session would otherwise hold ~470 bytes of spare capacity).
    private var spareActions: [SessionAction] = []
    /// The arrays this loop's sessions parse and serialise heads into
    /// (`HeadBuffers`): lent to one session at a time, for one parse or one
    /// event. Unchecked exclusivity: only this loop's thread touches it, and
    /// no borrower reaches back to the worker while it holds it.
    @exclusivity(unchecked) var headBuffers = HeadBuffers()
    /// The last `Host` value this loop's sessions routed and its endpoint
    /// (`HostFieldMemo`): lent to one session at a time, for one event, on
    /// the same terms as `headBuffers`.
    @exclusivity(unchecked) var hostMemo = HostFieldMemo()
    /// Where a new connection's first bytes are read at accept (`accept`),
    /// owned: they move from it into the session's input at once, so one
    /// buffer serves the loop.
    private let firstRead: EventBuffer

    var logger: Logger { shared.logger }

    init(index: Int, configuration: ActiveConfiguration, shared: SharedDaemonState, resolvConf: String?) throws {
        self.index = index
        loop = try EventLoop()
        resolver = try DNSResolver(loop: loop, resolvConf: resolvConf)
        guard let buffer = evbuffer_new() else { throw RuntimeError.system("evbuffer_new", ENOMEM) }
        firstRead = EventBuffer(pointer: buffer)
        self.configuration = configuration
        pool = UpstreamPool(generation: configuration.generation)
        self.shared = shared
    }

    deinit { evbuffer_free(firstRead.pointer) }

    /// Gives `actions` (a session's empty queue) the loop's buffer, when no
    /// other session has it: a session handling an event inside another's
    /// (a nested `handle`) grows a buffer of its own.
    func lendActions(to actions: inout [SessionAction]) {
        guard actions.capacity == 0 else { return }
        swap(&actions, &spareActions)
    }

    /// Empties `actions` and keeps the larger of it and the loop's buffer for the next `handle`.
    func takeBackActions(from actions: inout [SessionAction]) {
        actions.removeAll(keepingCapacity: true)
        if actions.capacity > spareActions.capacity { swap(&actions, &spareActions) }
        actions = []
    }

    /// Accepts on every configured listener and stops accepting on those no
    /// longer configured. `descriptors` holds this loop's own descriptor for
    /// each listener it does not accept on yet; every descriptor passed is
    /// owned from here on (used, or closed). A listener that cannot start does
    /// not keep the others from starting; the first failure is thrown after.
    func startListeners(_ descriptors: [ListenerConfiguration: ListenerDescriptor]) throws {
        let wanted = configuration.configuration.listeners
        for (listenerConfiguration, listener) in listeners where !wanted.contains(listenerConfiguration) {
            listener.close()
            listeners[listenerConfiguration] = nil
        }
        var unused = descriptors
        defer { unused.values.forEach { close($0.descriptor) } }
        var firstFailure: Error?
        for listenerConfiguration in wanted where listeners[listenerConfiguration] == nil {
            // None when the process could not bind the address (already reported).
            guard let given = unused.removeValue(forKey: listenerConfiguration) else { continue }
            let endpoint = listenerConfiguration.address
            let name = given.boundAddress.description
            let context = ListenerContext(configuration: listenerConfiguration, name: name,
                                          acceptDeferral: given.acceptDeferral,
                                          counters: shared.metrics.listener(named: name, mode: listenerConfiguration.mode))
            do {
                listeners[listenerConfiguration] = try Listener(
                    loop: loop, descriptor: given.descriptor, boundAddress: given.boundAddress,
                    onAccept: { [unowned self] fd, peer in self.accept(fd, peer: peer, listener: context) },
                    onError: { [unowned self] code in
                        self.logger.log(.warning, "listener", "\(endpoint): accept failed: \(String(cString: strerror(code)))")
                    })
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
    }

    /// The addresses actually bound (ports resolved when the config said 0).
    var boundAddresses: [String] { listeners.values.map { $0.boundAddress.description } }

    private func accept(_ fd: Int32, peer: SocketAddress, listener: ListenerContext) {
        listener.counters.lanes[index].accepted.add()
        let open = shared.openConnections.add(1, ordering: .relaxed).newValue
        if open > configuration.limits.maxConnections || isDraining {
            shared.openConnections.subtract(1, ordering: .relaxed)
            let reason = CloseReason(isDraining ? .shuttingDown : .connectionLimit, in: .idle)
            logger.log(reason.severity == .warning ? .warning : .debug, reason.subsystem, "\(peer) \(reason)")
            // Best effort on a fresh socket: the answer fits in its send buffer.
            if let answer = reason.answer {
                listener.counters.lanes[index].answered(answer.status)
            }
            if let answer = reason.answer?.serialise() {
                _ = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            // The request the kernel held for the accept is in the socket, unread.
            SocketOptions.discardReceived(fd)
            close(fd)
            return
        }
        // TCP_NODELAY came with the socket, from the listening one (`ListeningSocket`).
        let acceptedAt = ContinuousClock.now
        // The kernel hands over a connection once its first bytes are in
        // (`ListeningSocket.deferAcceptUntilData`), and clients send their
        // request right behind the TCP handshake anyway: read now. That saves
        // the registration for the first readiness, a loop pass and the
        // re-registration as a stream (epoll_ctl, epoll_wait, epoll_ctl), as
        // HAProxy's first recv after accept does. The head began a moment
        // ago, so its request_header clock starts now.
        if firstRead.read(from: fd, atMost: PlainStream.readSize) > 0 {
            startSession(descriptor: fd, peer: peer, listener: listener,
                         headDeadline: acceptedAt + configuration.timeouts.requestHeader, firstBytes: firstRead)
            return
        }
        // Nothing yet, the peer's close or an error: the socket waits as an
        // IdleSocket, which is told at once of a close or an error. A
        // connection that sent nothing was held silent by the kernel for the
        // listener's deferral first, so its clock started that long ago, at
        // its connect: a silent client is closed `request_header` after it
        // connected, as without the deferral. Were one handed over sooner
        // (the kernel may, for a syncookie connection under a SYN flood), it
        // would get a shorter clock. One handed over later gets a longer one:
        // under a burst of connects the kernel's SYN-ACK retransmissions, and
        // so the hand-over, come seconds late (docs/configuration.md).
        let remaining = max(.zero, configuration.timeouts.requestHeader - listener.acceptDeferral)
        let socket = IdleSocket(loop: loop, descriptor: fd, timeout: remaining, delegate: self)
        guard socket.isWaiting else {
            shared.openConnections.subtract(1, ordering: .relaxed)
            socket.close()
            return
        }
        waiting[ObjectIdentifier(socket)] = WaitingClient(socket: socket, peer: peer, listener: listener,
                                                          headDeadline: acceptedAt + remaining)
    }

    /// A waiting client's first bytes (or its close) arrived: it becomes a
    /// session, which reads them at once, with what is left of the
    /// request-header timeout. Nothing arrived in time: it is closed without
    /// an answer, as a session with an empty buffer is.
    func idleSocketDidFire(_ socket: IdleSocket, timedOut: Bool) {
        guard let waitingClient = waiting.removeValue(forKey: ObjectIdentifier(socket)) else { return }
        guard !timedOut else {
            socket.close()
            shared.openConnections.subtract(1, ordering: .relaxed)
            return
        }
        startSession(descriptor: socket.handOver(), peer: waitingClient.peer, listener: waitingClient.listener,
                     headDeadline: waitingClient.headDeadline, firstBytes: nil)
    }

    /// Makes the accepted `descriptor` a session's client stream and hands it
    /// its first bytes: `firstBytes` already read, or (nil) what the socket,
    /// known to be readable, holds now.
    private func startSession(descriptor: Int32, peer: SocketAddress, listener: ListenerContext,
                              headDeadline: ContinuousClock.Instant, firstBytes: EventBuffer?) {
        // The loop's buffer is empty again whatever happens: bytes left in it
        // would be read as the next connection's.
        defer { if let firstBytes { firstBytes.drain(firstBytes.count) } }
        guard let client = PlainStream(loop: loop, descriptor: descriptor) else {
            shared.openConnections.subtract(1, ordering: .relaxed)
            return
        }
        let session = ClientSession(worker: self, listener: listener, client: client, clientAddress: peer)
        sessions[ObjectIdentifier(session)] = session
        session.start(headDeadline: headDeadline, firstBytesFollow: firstBytes != nil)
        if let firstBytes { client.deliver(firstBytes) } else { client.readNow() }
    }

    private func closeWaiting(_ waitingClient: WaitingClient) {
        guard waiting.removeValue(forKey: ObjectIdentifier(waitingClient.socket)) != nil else { return }
        waitingClient.socket.close()
        shared.openConnections.subtract(1, ordering: .relaxed)
    }

    func sessionDidClose(_ session: ClientSession) {
        guard sessions.removeValue(forKey: ObjectIdentifier(session)) != nil else { return }
        shared.openConnections.subtract(1, ordering: .relaxed)
        if isDraining && sessions.isEmpty { finishDrain() }
    }

    func record(_ event: ViolationEvent, then: @escaping () -> Void) {
        shared.violations.record(event, on: loop, then: then)
    }

    /// Sends the RFC 7469 report of `event` to the policy's `report_uri`, if
    /// it has one and the event's key was not reported in the last minute.
    func sendReport(_ event: ViolationEvent, verdict: TrustVerdict, policy: TrustPolicy) {
        guard let uri = policy.reportURI, shared.violations.claimReport(for: event) else { return }
        let body = PinFailureReport.body(for: event, validatedChain: verdict.chain.verified ?? [], expires: policy.expires)
        ReportPoster.post(body, to: uri, loop: loop, resolver: resolver, logger: logger)
    }

    /// Swaps in a new configuration generation (on this loop) with this
    /// loop's descriptors for the listeners it adds. In-flight exchanges keep
    /// the generation they started with; pooled connections and TLS sessions
    /// of the previous one stay pooled where the new one verifies them alike
    /// (`ActiveConfiguration.verifiesAlike`), the rest are retired.
    func apply(_ newConfiguration: ActiveConfiguration, descriptors: [ListenerConfiguration: ListenerDescriptor]) {
        let previous = configuration
        configuration = newConfiguration
        pool.renew(to: newConfiguration.generation,
                   keepsConnection: { newConfiguration.verifiesAlike($0, as: previous) },
                   keepsSession: { newConfiguration.upstreamReuse.tlsSessions && newConfiguration.verifiesAlike($0, as: previous) })
        do {
            try startListeners(descriptors)
        } catch {
            logger.log(.error, "reload", "\(error)")
        }
    }

    /// Stops accepting, closes idle clients and the pool, and calls
    /// `completion` (on this loop) once the last in-flight exchange is done.
    func drain(completion: @escaping () -> Void) {
        isDraining = true
        drainCompletion = completion
        listeners.values.forEach { $0.close() }
        listeners.removeAll()
        pool.closeAll()
        for client in Array(waiting.values) { closeWaiting(client) }
        for session in Array(sessions.values) { session.drain() }
        if sessions.isEmpty { finishDrain() }
    }

    /// Closes every remaining client (the shutdown timeout ran out).
    func closeAllSessions() {
        for client in Array(waiting.values) { closeWaiting(client) }
        for session in Array(sessions.values) { session.cutNow() }
    }

    private func finishDrain() {
        let completion = drainCompletion
        drainCompletion = nil
        completion?()
    }
}

import Foundation
import PinproxyCore

/// The listener a client connection arrived on: one object per listener and
/// loop, which every session and waiting client of it references (a copy in
/// each was some 90 bytes per held connection).
final class ListenerContext {
    let configuration: ListenerConfiguration
    /// `ip:port` as bound, for logs and the violation log's `listener`.
    let name: String
    /// This listener's counters; a session writes its loop's lane only.
    let counters: ListenerCounters
    /// How long a connection that sent nothing was held by the kernel before
    /// accept(2) returned it (`ListeningSocket.acceptDeferral`).
    let acceptDeferral: Duration

    init(configuration: ListenerConfiguration, name: String, acceptDeferral: Duration, counters: ListenerCounters) {
        self.configuration = configuration
        self.name = name
        self.acceptDeferral = acceptDeferral
        self.counters = counters
    }
}

/// One client connection: the executor of its `SessionMachine`, as
/// `BodyRelay` is `ChunkedFramer`'s. It turns what the streams, the pool and
/// the connector report into `SessionEvent`s and carries out the
/// `SessionAction`s that come back; every decision is the machine's.
///
/// Payload never enters Swift: bodies move between evbuffers in `BodyRelay`;
/// Swift sees heads only. Memory is bounded by watermarks both ways. Every end
/// goes through `finish(_:)` with a `CloseReason`, logged once.
final class ClientSession: ByteStreamDelegate, UpstreamConnectionDelegate {
    /// Strong, though the worker holds the session: the worker's table is
    /// the session's only owner and drops it in `sessionDidClose`, which
    /// `closeNow` calls and every end reaches (at once, or once the answer is
    /// written; a loop stops only with its table empty), so the pair never
    /// outlives the close. An `unowned` reference cost a checked
    /// `swift_unownedRetainStrong` and a release on every use: 12 per
    /// keep-alive request (callgrind, 17 such calls before, 5 after).
    let worker: LoopWorker
    let listener: ListenerContext
    let clientAddress: SocketAddress
    /// The client's stream: plain, then TLS inside an intercepted CONNECT.
    var client: ByteStream
    var machine: SessionMachine
    /// The actions of the event being handled, and the index of the next to
    /// run. The buffer is the loop's, lent for the handling (`LoopWorker.lendActions`):
    /// a session between events holds none.
    private var actions: [SessionAction] = []
    private var nextAction = 0
    /// The runtime side of the current exchange.
    var exchange: Exchange?
    /// The runtime side of a blind CONNECT tunnel.
    var connect: TunnelConnect?
    /// The runtime side of an intercepted CONNECT.
    var interception: ClientInterception?
    /// The access-log line of the exchange under way; nil when `access_log` is off.
    var access: AccessRecord?
    /// This loop's lane of the listener's counters (SPEC §6).
    let counters: ListenerCounters.Lane
    /// The close was decided: output drains, then the connection closes.
    private(set) var isClosing = false
    private(set) var isClosed = false
    /// A staged close is under way (RFC 9112 §9.6, `SessionMachine.closesInStages`):
    /// what the client sends is read and dropped, and once the answer is
    /// written (`lingering`), the client has until it closes to finish.
    private var closesInStages = false
    /// The answer of a staged close is written and the write side shut: the
    /// connection closes when the client does, after `lingerIdle` without a
    /// byte, or at `until`. A reference, not an optional
    /// `ContinuousClock.Instant`: that one's initialisation and destruction
    /// go through the type's value witnesses in every session (callgrind:
    /// some 30 instructions a close request).
    private final class Lingering {
        let until: ContinuousClock.Instant
        init(until: ContinuousClock.Instant) { self.until = until }
    }
    private var lingering: Lingering?
    /// How long a staged close waits for the client's next bytes, and for its
    /// close in all: nginx's `lingering_timeout` and `lingering_time`.
    static let lingerIdle = EventTimeout(.seconds(5))
    static let lingerLimit = Duration.seconds(30)
    /// When the request-header timeout of the head being received runs out;
    /// nil between requests and during an exchange. It starts with a head's
    /// first byte (at accept for the first request), and a trickle of bytes
    /// cannot extend it.
    var headDeadline: ContinuousClock.Instant?

    init(worker: LoopWorker, listener: ListenerContext, client: ByteStream, clientAddress: SocketAddress) {
        self.worker = worker
        self.listener = listener
        self.client = client
        self.clientAddress = clientAddress
        counters = listener.counters.lanes[worker.index]
        machine = SessionMachine(mode: listener.configuration.mode)
        client.delegate = self
    }

    deinit { client.close() }

    /// Starts serving: `headDeadline` is when the request-header timeout that
    /// started at accept runs out. With `firstBytesFollow` (bytes read at
    /// accept are delivered next), those bytes decide: a complete head stops
    /// reading or reads on without a timeout, an incomplete one waits for
    /// the rest until the deadline (`awaitRequestHead`). Asking to read here
    /// would work out a timeout (some 500 instructions of clock and
    /// `Duration` arithmetic) that a close request drops unused in the same
    /// pass, before its request could go upstream. Without them, reading
    /// is asked for first: the socket is read at once, and may hold nothing.
    func start(headDeadline deadline: ContinuousClock.Instant, firstBytesFollow: Bool) {
        headDeadline = deadline
        client.setReadHighWatermark(worker.configuration.limits.maxHeaderBytes + 16 * 1024)
        client.setWriteTimeout(worker.configuration.idleTimeout)
        if !firstBytesFollow { client.startReading(timeout: .until(deadline)) }
    }

    /// Feeds `event` to the machine and runs the actions that come back, in
    /// order. An action may report an event itself (a pump that finished):
    /// its actions queue behind the ones still to run.
    func handle(_ event: SessionEvent) {
        // An event reported by one of this session's own actions joins the queue being run.
        let worker = self.worker
        guard nextAction == 0 else {
            return machine.handle(event, into: &actions, lending: &worker.headBuffers, hostMemo: &worker.hostMemo)
        }
        worker.lendActions(to: &actions)
        machine.handle(event, into: &actions, lending: &worker.headBuffers, hostMemo: &worker.hostMemo)
        while nextAction < actions.count {
            // Moved out of the queue, not copied: its payload (a head's bytes,
            // a rule's name) is neither retained for the call nor released
            // again when the queue is emptied (callgrind: -680 instructions
            // per keep-alive request). The payload-free case left in its
            // slot is never performed: the slot is behind `nextAction`.
            var action = SessionAction.readRequestHead
            swap(&action, &actions[nextAction])
            nextAction += 1
            perform(action)
        }
        nextAction = 0
        worker.takeBackActions(from: &actions)
    }

    /// Shutdown: closes the connection if it is between requests, or once
    /// its answer is written if it is closing in stages.
    func drain() {
        guard !closesInStages else {
            closesInStages = false
            if client.output.isEmpty { closeNow() }
            return
        }
        handle(.drain(buffered: client.input.count))
    }

    // MARK: the end

    /// Logs `reason` once, at its severity, and stops reading; the answer (if
    /// any) goes out, and the connection closes once its output is written,
    /// or in stages when the client may still be sending (`closeInStages`).
    func finish(_ reason: CloseReason, answering: Bool) {
        guard !isClosing else { return }
        log(reason)
        if access != nil {
            if answering, let answer = reason.answer, access?.status == 0 { access?.status = answer.status }
            if let exchange { access?.countBodies(of: exchange) }
            if let tunnel = connect?.tunnel { access?.countBytes(of: tunnel) }
            writeAccessRecord()
        }
        exchange?.abandonUpstream()
        exchange = nil
        isClosing = true
        client.stopReading()
        if answering, let answer = reason.answer {
            counters.answered(answer.status)
            client.write(answer.serialise())
        }
        if machine.refusedConnect { counters.refusedConnects.add() }
        if case .requestDenied = reason.cause { counters.denied.add() }
        client.flush()
        if answering && machine.closesInStages && client.isOpen { return closeInStages() }
        if !answering || client.output.isEmpty { closeNow() }
    }

    /// RFC 9112 §9.6: the client may still be sending (a body the answer
    /// refused, a request pipelined behind it). Closed at once, the socket
    /// would answer those bytes with a reset, and a reset can take the answer
    /// with it: a client still writing its upload sees the write fail before
    /// it reads, and a peer may drop received data it has not read yet. So
    /// the answer goes out with a FIN behind it, what the client sends is
    /// read and dropped meanwhile, and once the answer is written the
    /// connection stays open until the client closes (it reads the answer,
    /// then the end), stays silent for `lingerIdle`, or `lingerLimit` has
    /// passed. Until then only the write timeout bounds it, as any answer
    /// being written: a slow reader still gets the whole of it.
    private func closeInStages() {
        closesInStages = true
        client.input.drain(client.input.count)
        client.shutdownWrite()
        if client.output.isEmpty { return linger() }
        client.startReading(timeout: nil)
    }

    private func linger() {
        lingering = Lingering(until: .now + Self.lingerLimit)
        client.startReading(timeout: Self.lingerIdle)
    }

    /// Closes the client connection in the middle of whatever it is doing
    /// (the shutdown timeout ran out): reset, as the machine's `reset` is,
    /// when a response whose body ends at the close is under way.
    func cutNow() {
        if !isClosing && machine.cutResponseNeedsReset { client.resetOnClose() }
        closeNow()
    }

    /// Closes the client connection and tells the worker. Idempotent.
    func closeNow() {
        guard !isClosed else { return }
        isClosing = true
        isClosed = true
        exchange?.abandonUpstream()
        exchange = nil
        connect?.cancel()
        connect = nil
        interception?.cancel()
        interception = nil
        client.close()
        worker.sessionDidClose(self)
    }


    private func log(_ reason: CloseReason) {
        // SPEC §6: denied requests are logged, rate-limited (a deny rollout can be a flood).
        if case .requestDenied = reason.cause, !worker.deniedLog.admit(now: .now, logger: worker.logger) { return }
        let level: Logger.Level = switch reason.severity {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        }
        worker.logger.log(level, reason.subsystem, "\(clientAddress) \(reason)")
    }

    // MARK: the client stream

    func streamDidRead(_ stream: ByteStream) {
        guard !isClosing else { return dropClosingInput() }
        switch machine.state {
        case .awaitingHead: readRequestHead()
        case .exchanging: if exchange?.upstream != nil { pumpRequestBody() }
        case .clientHandshake, .tunnelling, .closed: break
        }
    }

    /// What a closing client still sends is dropped; a staged close ends
    /// once its time is up.
    @inline(never)
    private func dropClosingInput() {
        client.input.drain(client.input.count)
        if let lingering, ContinuousClock.now >= lingering.until { closeNow() }
    }

    func streamDidDrain(_ stream: ByteStream) {
        if isClosing {
            guard client.output.isEmpty else { return }
            // A staged close ends with the client's close instead.
            if !closesInStages { closeNow() } else if lingering == nil { linger() }
            return
        }
        if interception?.awaitsAnswerDrain == true { return startClientTLS() }
        if exchange?.resumeResponse(client: client) == true { relayResponse() }
    }

    func streamDidConnect(_ stream: ByteStream) {
        if machine.state == .clientHandshake { clientHandshakeEnded(nil) }
    }

    func stream(_ stream: ByteStream, didEnd ending: StreamEnd) {
        if closesInStages && !client.output.isEmpty && (ending == .endOfStream || ending == .incompleteClose) {
            // The client sends nothing more and may still be reading: the answer is written, then the close.
            closesInStages = false
            client.stopReading()
            return
        }
        guard !isClosing else { closeNow(); return }
        if machine.state == .clientHandshake { return clientHandshakeEnded(ending) }
        switch ending {
        // A request's end is its framing's: a TLS client without close_notify has ended as one with it.
        case .endOfStream, .incompleteClose: handle(.clientEnded(buffered: client.input.count))
        case .timedOut(reading: true): handle(.clientTimedOut(buffered: client.input.count))
        case .timedOut(reading: false), .failed, .tlsFailed: handle(.clientFailed)
        }
    }

    // MARK: the upstream connection (UpstreamConnectionDelegate)

    func upstreamDidRead(_ connection: UpstreamConnection) {
        if dropReservedUpstream(connection) { return }
        relayResponse()
    }

    func upstreamDidDrain(_ connection: UpstreamConnection) {
        if exchange?.resumeRequest(client: client) == true { pumpRequestBody() }
    }

    func upstream(_ connection: UpstreamConnection, didEnd ending: StreamEnd) {
        if dropReservedUpstream(connection) { return }
        let cause: UpstreamEnd.Cause = switch ending {
        case .endOfStream: .closeNotify
        case .incompleteClose: .incompleteClose
        case let .failed(detail): .socketFailed(detail)
        case let .tlsFailed(detail): .tlsFailed(detail)
        case .timedOut: .timedOut
        }
        handle(.upstreamEnded(UpstreamEnd(cause, buffered: connection.stream.input.count)))
    }
}

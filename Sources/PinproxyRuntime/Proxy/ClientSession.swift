import Foundation
import PinproxyCore

/// The listener a client connection arrived on.
struct ListenerContext {
    var configuration: ListenerConfiguration
    /// `ip:port` as bound, for logs and the violation log's `listener`.
    var name: String
}

/// One client connection: reads request heads, runs one exchange at a time
/// (pipelined requests wait in the input buffer, in order), and ends every
/// failure in one close-with-reason path.
///
/// Payload never enters Swift: bodies move between evbuffers in `BodyRelay`;
/// Swift sees heads only. Memory is bounded by watermarks both ways.
final class ClientSession: BufferEventDelegate, UpstreamConnectionDelegate {
    enum State { case awaitingHead, exchanging, closing, closed }

    /// Output held before the other side's reading pauses, and the level at which it resumes.
    static let highWatermark = 512 * 1024
    static let lowWatermark = 128 * 1024

    private unowned let worker: LoopWorker
    let listener: ListenerContext
    let clientAddress: SocketAddress
    private let client: BufferEvent
    private(set) var state = State.awaitingHead
    private var exchange: Exchange?
    private var clientReadClosed = false
    /// When the request-header timeout of the head being received runs out;
    /// nil while the connection is idle between requests or exchanging.
    ///
    /// Both waits use the client bufferevent's read timeout (no timer of
    /// their own, about 250 bytes per connection): between requests it is
    /// `timeouts.idle`; once a head has begun it is the time left until this
    /// deadline, set again after each piece, so a slowloris trickle cannot
    /// extend it. During an exchange there is none (a long download sends nothing).
    private var headDeadline: ContinuousClock.Instant?
    private var clientVersion = HTTPVersion.http11

    init(worker: LoopWorker, listener: ListenerContext, client: BufferEvent, clientAddress: SocketAddress) {
        self.worker = worker
        self.listener = listener
        self.client = client
        self.clientAddress = clientAddress
        client.delegate = self
    }

    deinit {
        client.free()
    }

    /// `headDeadline`: when the request-header timeout that started at accept runs out.
    func start(headDeadline deadline: ContinuousClock.Instant) {
        client.setReadHighWatermark(worker.configuration.limits.maxHeaderBytes + 16 * 1024)
        headDeadline = deadline
        setReadTimeout(Self.timeLeft(until: deadline))
        // EV_WRITE stays off while nothing is queued: output is written at once
        // by `flushOutput()`, which arms EV_WRITE only for what the socket refused.
        client.disableWrite()  // a new socket bufferevent starts with EV_WRITE on
        client.enableRead()
    }

    /// Reads the bytes that woke the waiting client now, not a loop turn later.
    func readArrivedBytes() {
        switch client.readNow() {
        case 0:
            // The client closed without sending anything.
            clientReadClosed = true
            close()
        case let count where count > 0:
            readRequestHead()
        default:
            break  // nothing there after all, or an error: libevent's own read reports it
        }
    }

    /// Closes a connection that sits between requests (drain on shutdown);
    /// one in the middle of an exchange is left to finish.
    func closeIfIdle() {
        if state == .awaitingHead && client.inputLength == 0 { close() }
    }

    // MARK: request heads

    /// The read timeout while awaiting a head (nil: none, while exchanging);
    /// the write timeout is always `timeouts.idle`.
    private func setReadTimeout(_ timeout: timeval?) {
        client.setTimeouts(read: timeout, write: worker.configuration.idleTimeval)
    }

    /// What is left until `deadline`, at least a millisecond: libevent reads
    /// a zero timeval as "no timeout", which would let a late head wait forever.
    private static func timeLeft(until deadline: ContinuousClock.Instant) -> timeval {
        timeval(duration: max(deadline - .now, .milliseconds(1)))
    }

    /// The client sent nothing for `timeouts.idle`, or its head missed `headDeadline`.
    private func readTimedOut() {
        guard state == .awaitingHead else { close(); return }
        if client.inputLength == 0 {
            close()
        } else {
            respond(with: CloseReason(.requestHeadTimedOut, in: .requestHead).answer!)
        }
    }

    private func readRequestHead() {
        guard state == .awaitingHead else { return }
        let available = client.inputLength
        guard available > 0 else {
            if clientReadClosed { close() }
            return
        }
        let limits = worker.configuration.limits
        let headLimits = HeadLimits(maxHeaderBytes: limits.maxHeaderBytes, maxTargetBytes: limits.maxRequestTargetBytes)
        let result = ByteBuffer.withContiguousPrefix(client.input, count: limits.maxHeaderBytes + 1) {
            RequestHeadParser.parse($0, limits: headLimits)
        }
        switch result {
        case .incomplete:
            if clientReadClosed { close(); return }
            // The first bytes of a head start the request_header clock (a head
            // that arrives whole never needs it); later pieces leave it running.
            let deadline = headDeadline ?? .now + worker.configuration.timeouts.requestHeader
            headDeadline = deadline
            guard deadline > .now else { readTimedOut(); return }
            setReadTimeout(Self.timeLeft(until: deadline))
        case let .invalid(error):
            worker.logger.log(.info, "http", "\(clientAddress): request rejected (\(error.status)): \(error.reason)")
            respond(with: CloseReason(.invalidRequest(error), in: .requestHead).answer!)
        case let .complete(head, consumed):
            ByteBuffer.drain(client.input, count: consumed)
            headDeadline = nil
            setReadTimeout(nil)
            clientVersion = head.version
            begin(head)
        }
    }

    private func begin(_ head: HTTPRequestHead) {
        let active = worker.configuration
        let routing: Result<RoutedRequest, HTTPError>
        switch listener.configuration.mode {
        case .forward: routing = RequestRouter.routeForward(head)
        case let .gateway(upstream): routing = RequestRouter.routeGateway(head, upstream: upstream)
        }
        let routed: RoutedRequest
        switch routing {
        case let .failure(error):
            respond(with: CloseReason(.invalidRequest(error), in: .requestHead).answer!)
            return
        case let .success(value):
            routed = value
        }
        if worker.isOwnListener(routed.upstream) {
            respond(with: CloseReason(.proxyLoop, in: .requestHead).answer!)
            return
        }
        guard let policy = active.policy(for: routed.upstream.host) else {
            respond(with: CloseReason(.requestDenied(routed.upstream.host), in: .requestHead).answer!)
            return
        }
        let exchange = Exchange(request: head, routed: routed, policy: policy, configuration: active,
                                clientKeepAlive: head.wantsKeepAlive && !worker.isDraining)
        if let error = exchange.requestBody.bufferedFramingError(in: client.input) {
            // Refused before any upstream is connected (attach checks again for what arrives meanwhile).
            worker.logger.log(.info, "http", "\(clientAddress): request body rejected: \(error.reason)")
            respond(with: CloseReason(.invalidRequest(error), in: .requestHead).answer!)
            return
        }
        self.exchange = exchange
        state = .exchanging
        if let pooled = worker.pool.take(exchange.poolKey) {
            exchange.usesPooledConnection = true
            attach(pooled, to: exchange)
        } else {
            connect(exchange)
        }
    }

    // MARK: errors and closing

    /// Answers with an error and closes. When a response is already under way
    /// there is nothing meaningful to add: the connection is cut instead.
    func respond(with response: ProxyErrorResponse) {
        if let exchange {
            exchange.abandonUpstream()
            if exchange.responseStarted { close(); return }
        }
        exchange = nil
        client.write(response.serialise())
        closeAfterFlush()
    }

    /// Stops reading and closes once the output is written.
    func closeAfterFlush() {
        guard state != .closed else { return }
        state = .closing
        client.disableRead()
        client.flushOutput()
        if client.outputLength == 0 { close() }
    }

    /// The one close path: frees the client and whatever upstream is attached.
    func close() {
        guard state != .closed else { return }
        state = .closed
        exchange?.abandonUpstream()
        exchange = nil
        client.free()
        worker.sessionDidClose(self)
    }

    // MARK: client I/O

    func bufferEventDidRead(_ event: BufferEvent) {
        switch state {
        case .awaitingHead: readRequestHead()
        case .exchanging: pumpRequestBody()
        case .closing: ByteBuffer.drain(client.input, count: client.inputLength)
        case .closed: break
        }
    }

    func bufferEventDidWrite(_ event: BufferEvent) {
        // Drained: back to writing directly (see `BufferEvent.flushOutput`).
        if client.outputLength == 0 { client.disableWrite() }
        if state == .closing && client.outputLength == 0 { close(); return }
        if let exchange, exchange.responsePaused, let upstream = exchange.upstream {
            exchange.responsePaused = false
            upstream.bufferEvent.enableRead()
            relayResponse()
        }
    }

    func bufferEvent(_ event: BufferEvent, didReport events: BufferEventEvents) {
        if events.contains(.eof) && !events.contains(.error) {
            clientReadClosed = true
            switch state {
            case .awaitingHead:
                // Half-close: requests already buffered are still answered.
                if client.inputLength == 0 { close() } else { readRequestHead() }
            case .exchanging:
                // The rest of the body may already be buffered (half-close after
                // a complete upload): pumping decides. Before the upstream is
                // attached, `attach` pumps and closes if the body stays short.
                if let exchange, !exchange.requestComplete, exchange.upstream != nil { pumpRequestBody() }
            case .closing, .closed:
                close()
            }
            return
        }
        if events.contains(.timeout) && events.contains(.reading) {
            readTimedOut()
            return
        }
        // Reset, write error or write timeout: the client is gone.
        close()
    }

    // MARK: upstream I/O (UpstreamConnectionDelegate)

    func upstreamDidRead(_ connection: UpstreamConnection) { relayResponse() }

    func upstreamDidWrite(_ connection: UpstreamConnection) {
        if let exchange, exchange.requestPaused {
            exchange.requestPaused = false
            client.enableRead()
            pumpRequestBody()
        }
    }

    func upstream(_ connection: UpstreamConnection, didReport events: BufferEventEvents) {
        upstreamDidEnd(events)
    }

    // Shared with ClientSession+Upstream.
    var currentExchange: Exchange? { exchange }
    var loopWorker: LoopWorker { worker }
    var clientBuffer: BufferEvent { client }
    var clientHasClosedReading: Bool { clientReadClosed }
    var clientHTTPVersion: HTTPVersion { clientVersion }

    /// After an exchange: serve the next (possibly already buffered) request or close.
    func exchangeDidFinish(keepClientOpen: Bool) {
        exchange = nil
        guard state == .exchanging else { return }
        if keepClientOpen && !worker.isDraining && !(clientReadClosed && client.inputLength == 0) {
            state = .awaitingHead
            client.enableReadIfDisabled()
            headDeadline = nil
            if client.inputLength == 0 { setReadTimeout(worker.configuration.idleTimeval) }
            if client.inputLength > 0 || clientReadClosed { readRequestHead() }
        } else {
            closeAfterFlush()
        }
    }
}

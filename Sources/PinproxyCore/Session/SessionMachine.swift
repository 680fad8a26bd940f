/// One client connection as a value: events in (`SessionEvent`), actions out
/// (`SessionAction`), no I/O. Every HTTP decision a proxy connection makes is
/// here, testable without sockets: routing and refusals, one exchange at a
/// time with pipelined requests waiting in order (RFC 9112 §9.3), keep-alive
/// and close (§9.3, §9.6), interim responses (RFC 9110 §15.2), the retry of
/// an idempotent request on a pooled connection found closed (§9.3.1), which
/// upstream connections may be pooled again, and which failure gets which
/// answer (`CloseReason`). `ClientSession` executes it, as `BodyRelay`
/// executes `ChunkedFramer`.
///
/// Invariants: exactly one `close`, `reset` or `answerAndClose` is ever emitted; after
/// it every event yields nothing. Nothing is sent upstream for a request the
/// machine refuses, and an upstream connection is released (pooled or closed)
/// exactly once per exchange that acquired one.
public struct SessionMachine: Sendable {
    public enum State: Sendable, Hashable {
        /// Waiting for a request head (between requests, or before the first).
        case awaitingHead
        /// One request and its response are under way (`exchange`), or a
        /// CONNECT's upstream is being made.
        case exchanging
        /// An intercepted CONNECT was answered `200`; the client's TLS handshake runs.
        case clientHandshake
        /// A blind CONNECT tunnel relays bytes both ways.
        case tunnelling
        /// Ended: the close (or answer and close) was emitted.
        case closed
    }

    public internal(set) var state = State.awaitingHead
    /// The exchange under way while `exchanging` (kept outside `State`, so
    /// that each event changes its fields in place instead of copying it out
    /// of the enum and back: every copy retains the head's strings and arrays).
    public internal(set) var exchange: ExchangeProgress?
    /// Set once an intercepted CONNECT's client TLS is up: every request on
    /// this connection goes to this upstream, under its host's rule.
    public internal(set) var interceptedUpstream: Endpoint?
    /// The listener's mode: forward (absolute-form or Host) or a fixed upstream.
    public let mode: ListenerConfiguration.Mode
    /// The version of the last request head, for the status lines of answers and responses.
    public private(set) var clientVersion = HTTPVersion.http11
    /// The client half-closed: requests already buffered are still answered.
    public internal(set) var clientReadClosed = false
    /// The client's last request said it ends the connection (`Connection:
    /// close`, or HTTP/1.0 without keep-alive) and has been read whole: such
    /// a client sends nothing more (RFC 9112 §9.6).
    public internal(set) var clientSentItsLast = false
    /// The connection ends after an answer or a response that the client may
    /// still be sending behind (a refused upload, an early answer to one, a
    /// keep-alive client that may have pipelined): it is closed in stages
    /// (RFC 9112 §9.6), the write side first, then what the client still
    /// sends is read and dropped until it closes, so that bytes arriving
    /// after a full close do not make the kernel reset the connection under
    /// the answer. Set with the `answerAndClose` it applies to.
    public internal(set) var closesInStages = false
    /// The connection ended on a CONNECT that was answered with an error
    /// instead of a tunnel (SPEC §6's CONNECT outcome `refused`).
    public internal(set) var refusedConnect = false
    /// The loop's buffers while an event is handled (`handle(_:into:lending:hostMemo:)`),
    /// taken for the heads serialised and given the arrays of heads done with.
    var headBuffers = HeadBuffers()

    public init(mode: ListenerConfiguration.Mode) {
        self.mode = mode
    }

    /// `handle(_:into:)` with what the loop keeps for its sessions lent for
    /// the event: the heads it serialises are written into the loop's
    /// `HeadBuffers` and the heads it is done with go back to them, and a head
    /// it routes has its `Host` value checked against the loop's `HostFieldMemo`;
    /// the connection keeps neither between events.
    public mutating func handle(_ event: SessionEvent, into actions: inout [SessionAction],
                                lending buffers: inout HeadBuffers, hostMemo: inout HostFieldMemo) {
        swap(&headBuffers, &buffers)
        dispatch(event, into: &actions, hostMemo: &hostMemo)
        swap(&headBuffers, &buffers)
    }

    /// Feeds one event; appends what to do to `actions` (reused by the caller,
    /// so the hot path allocates no array per event).
    public mutating func handle(_ event: SessionEvent, into actions: inout [SessionAction]) {
        var hostMemo = HostFieldMemo()
        dispatch(event, into: &actions, hostMemo: &hostMemo)
    }

    private mutating func dispatch(_ event: SessionEvent, into actions: inout [SessionAction],
                                   hostMemo: inout HostFieldMemo) {
        guard state != .closed else { return }
        switch event {
        case let .requestHead(result, buffered, rules, draining):
            requestHead(result, buffered: buffered, rules: rules, draining: draining, hostMemo: &hostMemo, into: &actions)
        case let .upstreamReady(pooled, reported):
            upstreamReady(pooled: pooled, reported: reported, into: &actions)
        case let .upstreamFailed(failure):
            upstreamFailed(failure, into: &actions)
        case .violationRecorded:
            guard case let .blocked(reason)? = exchange?.upstream, let upstream = exchange?.routed.upstream else { return }
            end(CloseReason(.trustBlocked(upstream, reason), in: .connect), into: &actions)
        case let .requestBody(progress):
            requestBody(progress, into: &actions)
        case let .responseHead(result):
            responseHead(result, into: &actions)
        case let .responseBody(progress):
            responseBody(progress, into: &actions)
        case let .clientEnded(buffered):
            clientEnded(buffered: buffered, into: &actions)
        case let .clientTimedOut(buffered):
            if state != .awaitingHead {
                abort(CloseReason(.clientTimedOut, in: phase), into: &actions)
            } else if buffered == 0 {
                // A connection that never began a head is closed without an answer (SPEC §3).
                abort(CloseReason(.clientTimedOut, in: .idle), into: &actions)
            } else {
                end(CloseReason(.requestHeadTimedOut, in: .requestHead), into: &actions)
            }
        case .clientFailed:
            abort(CloseReason(exchange == nil ? .completed : .clientClosed, in: phase), into: &actions)
        case let .upstreamEnded(ending):
            upstreamEnded(ending, into: &actions)
        case .tunnelOpened:
            tunnelOpened(into: &actions)
        case let .tunnelClosed(idle):
            // The relay owned both sockets and has closed them: nothing is left to answer or flush.
            if state == .tunnelling { abort(CloseReason(idle ? .clientTimedOut : .completed, in: .tunnel), into: &actions) }
        case .clientTLSReady:
            clientTLSReady(into: &actions)
        case let .clientTLSFailed(detail):
            guard state == .clientHandshake, let host = interceptedUpstream?.host else { return }
            abort(CloseReason(.clientTLSFailed(host, detail: detail), in: .clientHandshake), into: &actions)
        case let .drain(buffered):
            if state == .awaitingHead && buffered == 0 { end(CloseReason(.completed, in: .idle), into: &actions) }
        }
    }

    /// Where the connection is, for a `CloseReason`.
    public var phase: CloseReason.Phase {
        if state == .clientHandshake { return .clientHandshake }
        if state == .tunnelling { return .tunnel }
        return switch exchange?.upstream {
        case nil: .idle
        case .acquiring?, .blocked?: .connect
        case .attached?: exchange?.responseHeadSent == true ? .responseBody : .response
        }
    }

    // MARK: request heads

    private mutating func requestHead(_ result: HeadParseResult<HTTPRequestHead>, buffered: Int, rules: RequestRules,
                                      draining: Bool, hostMemo: inout HostFieldMemo, into actions: inout [SessionAction]) {
        guard state == .awaitingHead else { return }
        switch result {
        case .incomplete where draining && buffered == 0:
            end(CloseReason(.completed, in: .idle), into: &actions)
        case .incomplete where clientReadClosed:
            // RFC 9112 §9.6: the client will send nothing more; a partial head is abandoned.
            if buffered == 0 {
                end(CloseReason(.completed, in: .idle), into: &actions)
            } else {
                abort(CloseReason(.clientClosed, in: .requestHead), into: &actions)
            }
        case .incomplete:
            actions.append(.awaitRequestHead(idle: buffered == 0))
        case let .invalid(error):
            end(CloseReason(.invalidRequest(error), in: .requestHead), into: &actions)
        case let .complete(head, consumed):
            clientVersion = head.version
            clientSentItsLast = !head.wantsKeepAlive && head.bodyFraming.isEmpty
            begin(head, consumed: consumed, rules: rules, draining: draining, hostMemo: &hostMemo, into: &actions)
        }
    }

    /// Routes a complete head (SPEC §3) and starts its exchange, or refuses it.
    private mutating func begin(_ head: HTTPRequestHead, consumed: Int, rules: RequestRules, draining: Bool,
                                hostMemo: inout HostFieldMemo, into actions: inout [SessionAction]) {
        if head.method == "CONNECT", case .forward = mode, interceptedUpstream == nil {
            return beginConnect(head, consumed: consumed, rules: rules, into: &actions)
        }
        let routing: Routing
        if let upstream = interceptedUpstream {
            routing = Self.routeInside(head, to: upstream)
        } else {
            switch mode {
            case .forward: routing = Routing(RequestRouter.routeForward(head, hostMemo: &hostMemo))
            case let .gateway(upstream): routing = Routing(RequestRouter.routeGateway(head, upstream: upstream, hostMemo: &hostMemo))
            }
        }
        let routed: RoutedRequest
        switch routing {
        case let .refused(cause):
            return end(CloseReason(cause, in: .requestHead), into: &actions)
        case let .routed(value):
            guard MaxForwards.applies(to: head.method) else {
                routed = value
                break
            }
            switch Self.applyMaxForwards(head, to: value) {
            case let .refused(cause):
                return end(CloseReason(cause, in: .requestHead), into: &actions)
            case let .routed(forwarded):
                routed = forwarded
            }
        }
        if rules.isOwnListener(routed.upstream) {
            return end(CloseReason(.proxyLoop, in: .requestHead), into: &actions)
        }
        guard let rule = rules.ruleName(for: routed.upstream.host) else {
            return end(CloseReason(.requestDenied(routed.upstream.host), in: .requestHead), into: &actions)
        }
        exchange = ExchangeProgress(request: head, routed: routed, rule: rule,
                                    clientKeepAlive: head.wantsKeepAlive && !draining)
        state = .exchanging
        actions.append(.startExchange(consumedHead: consumed, upstream: routed.upstream, rule: rule))
    }

    /// RFC 9110 §7.6.2 for a TRACE or OPTIONS: `routed` with the value to
    /// forward, or nowhere: pinproxy's own answer (at zero) or a refusal.
    /// Kept out of line: few requests get here, and `begin` is on every
    /// request's path.
    @inline(never)
    private static func applyMaxForwards(_ head: HTTPRequestHead, to routed: RoutedRequest) -> Routing {
        switch MaxForwards.decide(head) {
        case let .failure(error):
            return .refused(.invalidRequest(error))
        case .success(.answerHere):
            return .refused(.finalRecipient(method: head.method,
                                            reflected: head.method == "TRACE" ? TraceReflection.content(of: head) : []))
        case let .success(.forward(remaining)):
            var forwarded = routed
            forwarded.maxForwards = remaining
            return .routed(forwarded)
        case .success(.relayAsReceived):
            return .routed(routed)
        }
    }

    // MARK: the upstream

    private mutating func upstreamReady(pooled: Bool, reported: Bool, into actions: inout [SessionAction]) {
        guard exchange?.upstream == .acquiring, let requestComplete = exchange?.requestComplete else { return }
        if exchange?.connect == .intercept, let upstream = exchange?.routed.upstream {
            interceptedUpstream = upstream
            return interceptionReady(reported: reported, into: &actions)
        }
        exchange?.upstream = .attached(pooled: pooled)
        if reported { actions.append(.recordViolation(blocking: false)) }
        // Serialised from the exchange in place: binding its head to a local
        // copied it, retaining and releasing every string and array in it.
        guard let head = exchange?.upstreamRequestHead(into: headBuffers.takeBytes())
        else { return }
        actions.append(.sendRequestHead(head))
        if exchange?.request.continueIsForProxy == true && clientVersion == .http11 && !requestComplete {
            // The expectation was addressed to pinproxy and not forwarded: the
            // request is on its way, so pinproxy answers it (RFC 9110 §10.1.1).
            actions.append(.sendInterimResponse(Self.continueResponse))
        }
        if !requestComplete { actions.append(.relayRequestBody) }
        actions.append(.relayResponse)
    }

    /// pinproxy's own interim answer to an expectation addressed to it.
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private mutating func upstreamFailed(_ failure: UpstreamFailureKind, into actions: inout [SessionAction]) {
        guard exchange?.upstream == .acquiring, let upstream = exchange?.routed.upstream else { return }
        let cause: CloseReason.Cause
        switch failure {
        case let .dns(detail): cause = .dnsFailed(upstream, detail: detail)
        case let .refused(detail): cause = .connectionRefused(upstream, detail: detail)
        case let .timedOut(detail): cause = .connectTimedOut(upstream, detail: detail)
        case let .tls(detail): cause = .tlsFailed(upstream, detail: detail)
        case let .blocked(reason):
            // The 502 waits until the violation event is durable (SPEC §4).
            exchange?.upstream = .blocked(reason)
            actions.append(.recordViolation(blocking: true))
            return
        }
        end(CloseReason(cause, in: .connect), into: &actions)
    }

    private mutating func upstreamEnded(_ ending: UpstreamEnd, into actions: inout [SessionAction]) {
        // An intercepted CONNECT's upstream waiting for the first request is the executor's to drop.
        guard state == .exchanging, case let .attached(pooled)? = exchange?.upstream,
              let upstream = exchange?.routed.upstream else { return }
        if ending.cause == .closeNotify && exchange?.responseDelimitedByClose == true {
            // The close ends the body: relay what came with it, and the exchange
            // is done; the client learns the end from the close too.
            actions.append(.relayResponse)
            return end(CloseReason(.completed, in: .responseBody), into: &actions)
        }
        if exchange?.responseStarted == true {
            // Mid-body: the connection is cut (`abort`: reset when the client's body ends at the close).
            let truncated = ending.cause == .incompleteClose && exchange?.responseDelimitedByClose == true
            let cause: CloseReason.Cause = truncated ? .upstreamTruncatedResponse(upstream)
                : .upstreamEndedMidResponse(upstream, how: ending.cause)
            return abort(CloseReason(cause, in: phase), into: &actions)
        }
        if pooled && exchange?.isRetriable == true && ending.buffered == 0 && ending.cause != .timedOut {
            // RFC 9112 §9.3.1: a pooled connection the server had closed; the
            // idempotent request, of which nothing was answered, goes again once.
            actions.append(.releaseUpstream(reuse: false))
            exchange?.upstream = .acquiring
            actions.append(.reconnectUpstream)
            return
        }
        let cause: CloseReason.Cause = switch ending.cause {
        case let .tlsFailed(detail): .tlsFailed(upstream, detail: detail)
        case .timedOut: .upstreamTimedOut(upstream)
        case .closeNotify, .incompleteClose, .socketFailed: .upstreamClosed(upstream, how: ending.cause)
        }
        end(CloseReason(cause, in: phase), into: &actions)
    }
}

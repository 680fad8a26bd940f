import Foundation
import PinproxyCore

/// Carrying out the machine's actions: heads, the upstream, the two body
/// pumps with their back-pressure, the violation record.
extension ClientSession {
    func perform(_ action: SessionAction) {
        switch action {
        case let .startExchange(consumedHead, endpoint, rule):
            client.input.drain(consumedHead)
            headDeadline = nil
            if machine.exchange?.needsNoMoreClientInput == true {
                // Nothing more is read. A client whose request came with its
                // accept was registered for reading in this same loop pass:
                // libevent's changelist cancels the pair, so the socket never
                // reaches epoll (one epoll_ctl saved now, and the one at the
                // close). A client that resets the connection meanwhile is
                // noticed when the response is written, as by HAProxy
                // without `option abortonclose`.
                client.stopReading()
            } else {
                // During an exchange there is no read timeout: a long download sends nothing.
                client.startReading(timeout: nil)
            }
            acquireUpstream(endpoint, rule: rule)
        case let .awaitRequestHead(idle):
            awaitRequestHead(idle: idle)
        case .readRequestHead:
            readRequestHead()
        case .reconnectUpstream:
            if let exchange { connect(exchange) }
        case let .recordViolation(blocking):
            recordViolation(blocking: blocking)
        case let .sendRequestHead(bytes):
            // A body pump behind it flushes again: the head and the first body bytes may share a record.
            exchange?.upstream?.stream.write(bytes)
            exchange?.upstream?.stream.flush()
            // A write copies the bytes (`evbuffer_add`): the array serves the next head.
            worker.headBuffers.giveBack(bytes: bytes)
        case let .sendInterimResponse(bytes):
            client.write(bytes)
            client.flush()
        case let .relayInterimResponse(relayed, consumedHead):
            exchange?.upstream?.stream.input.drain(consumedHead)
            if let relayed {
                client.write(relayed)
                client.flush()
                worker.headBuffers.giveBack(bytes: relayed)
            }
            relayResponse()
        case let .sendResponseHead(bytes, consumedHead, framing, dropsChunkFraming):
            counters.answered(machine.exchange?.responseStatus ?? 0)
            if access != nil { access?.status = machine.exchange?.responseStatus ?? 0 }
            exchange?.upstream?.stream.input.drain(consumedHead)
            client.write(bytes)
            worker.headBuffers.giveBack(bytes: bytes)
            exchange?.responseBody = BodyRelay(framing: framing, dropsChunkFraming: dropsChunkFraming)
            // The body follows the head in the same write where it is already here.
            relayResponse()
        case .relayRequestBody:
            pumpRequestBody()
        case .relayResponse:
            relayResponse()
        case let .releaseUpstream(reuse):
            releaseUpstream(reuse: reuse)
        case let .nextRequest(reuseUpstream):
            releaseUpstream(reuse: reuseUpstream)
            readRequestHead()
        case let .openTunnel(consumedHead, target, rule):
            worker.configuration.policy(forRule: rule)?.counters.lane(worker.index).requests.add()
            beginAccessRecord(target: target, rule: rule)
            openTunnel(consumedHead: consumedHead, to: target)
        case let .beginTunnel(answer):
            counters.answered(200)
            counters.tunnelled.add()
            access?.status = 200
            beginTunnel(answer: answer)
        case let .beginInterception(answer, host):
            counters.answered(200)
            counters.intercepted.add()
            if access != nil {
                access?.status = 200
                writeAccessRecord()
            }
            beginInterception(answer: answer, host: host)
        case let .answerAndClose(reason):
            finish(reason, answering: true)
        case let .close(reason):
            finish(reason, answering: false)
        case let .reset(reason):
            client.resetOnClose()
            finish(reason, answering: false)
        }
    }

    // MARK: request heads

    /// Waits for a head: `timeouts.idle` with nothing of one yet; else until
    /// the request-header deadline, which the first byte of a head starts.
    private func awaitRequestHead(idle: Bool) {
        let configuration = worker.configuration
        if idle && headDeadline == nil {
            client.startReading(timeout: configuration.idleTimeout)
            return
        }
        let deadline = headDeadline ?? .now + configuration.timeouts.requestHeader
        headDeadline = deadline
        guard deadline > .now else {
            handle(.clientTimedOut(buffered: client.input.count))
            return
        }
        client.startReading(timeout: .until(deadline))
    }

    func readRequestHead() {
        let configuration = worker.configuration
        let limits = HeadLimits(maxHeaderBytes: configuration.limits.maxHeaderBytes,
                                maxTargetBytes: configuration.limits.maxRequestTargetBytes)
        let buffered = client.input.count
        let result = buffered == 0 ? .incomplete : client.input.withContiguousPrefix(count: limits.maxHeaderBytes + 1) {
            RequestHeadParser.parse($0, limits: limits, buffers: &worker.headBuffers)
        }
        handle(.requestHead(result, buffered: buffered, rules: configuration.rules, draining: worker.isDraining))
    }

    private func releaseUpstream(reuse: Bool) {
        var reuse = reuse
        guard let exchange, var upstream = exchange.upstream else { return }
        if access != nil {
            access?.countBodies(of: exchange)
            // Without a response the answer is still to come (`finish` writes the line with it).
            if access?.status != 0 { writeAccessRecord() }
        }
        exchange.upstream = nil
        client.setWriteLowWatermark(0)
        upstream.delegate = nil
        var limit = exchange.configuration.upstreamReuse.idlePerHost
        if reuse, upstream.key.generation != worker.pool.generation {
            // A reload came during the exchange: the connection is pooled for
            // the new generation only if that verifies it alike.
            let current = worker.configuration
            if current.verifiesAlike(upstream.key, as: exchange.configuration) {
                upstream = upstream.renewed(generation: current.generation)
                limit = current.upstreamReuse.idlePerHost
            } else {
                reuse = false
            }
        }
        if reuse {
            upstream.completedExchanges += 1
            worker.pool.put(upstream, keepingAtMost: limit)
        } else {
            upstream.close()
        }
        if machine.exchange == nil { self.exchange = nil }
    }

    private func recordViolation(blocking: Bool) {
        guard let exchange, let verdict = exchange.verdict, let progress = machine.exchange,
              let peer = exchange.upstream?.peer ?? exchange.blockedPeer else { return }
        let transport: ViolationEvent.ClientTransport = progress.connect != nil || machine.interceptedUpstream != nil
            ? .connect : .http
        let event = exchange.violationEvent(verdict, peer: peer, progress: progress, client: clientAddress,
                                            listener: listener.name, transport: transport)
        exchange.policy.counters.violation(on: worker.index, reason: event.reason, reported: event.action == .reported)
        worker.sendReport(event, verdict: verdict, policy: exchange.policy.policy)
        // A block's 502 leaves only once the event is durable on disk (SPEC §4).
        worker.record(event) { [weak self] in if blocking { self?.handle(.violationRecorded) } }
    }

    // MARK: the bodies

    func pumpRequestBody() {
        guard machine.exchange?.requestComplete == false, let progress = exchange?.pumpRequest(from: client) else { return }
        handle(.requestBody(progress))
    }

    /// Parses the response head until a final one is sent, then moves the body.
    func relayResponse() {
        guard let exchange, let upstream = exchange.upstream else { return }
        guard exchange.responseBody != nil else {
            // Nothing from the upstream yet (the request has only just gone
            // out, every exchange): a parse could only say incomplete, which the machine ignores.
            guard !upstream.stream.input.isEmpty else { return }
            let limits = HeadLimits(maxHeaderBytes: exchange.configuration.limits.maxHeaderBytes,
                                    maxTargetBytes: exchange.configuration.limits.maxRequestTargetBytes)
            let method = machine.exchange?.request.method ?? "GET"
            let result = upstream.stream.input.withContiguousPrefix(count: limits.maxHeaderBytes + 1) {
                ResponseHeadParser.parse($0, requestMethod: method, limits: limits, buffers: &worker.headBuffers)
            }
            return handle(.responseHead(refusingInvalidBufferedBody(result, in: upstream.stream.input)))
        }
        handle(.responseBody(exchange.pumpResponse(to: client)))
    }

    /// SPEC §3 for responses as for requests: chunk framing that arrived with
    /// a final head is checked before the head is sent, so an invalid chunk
    /// line already received gets the client a `502 http_protocol_error`
    /// instead of a head cut off after it. (Found later, the connection is
    /// cut: nothing meaningful can follow a partial response.) Only a chunked
    /// body has framing of its own to check.
    private func refusingInvalidBufferedBody(_ result: HeadParseResult<HTTPResponseHead>,
                                             in input: EventBuffer) -> HeadParseResult<HTTPResponseHead> {
        guard case let .complete(head, consumed) = result, head.bodyFraming == .chunked,
              let error = BodyRelay(framing: .chunked).bufferedFramingError(in: input, from: consumed) else { return result }
        return .invalid(HTTPError(status: 502, reason: error.reason))
    }
}

import Foundation
import PinproxyCore

/// Carrying out the machine's actions: heads, the upstream, the two body
/// pumps with their back-pressure, the violation record.
extension ClientSession {
    func perform(_ action: SessionAction) {
        switch action {
        case let .consumeRequestHead(count):
            client.input.drain(count)
            headDeadline = nil
            // During an exchange there is no read timeout: a long download sends nothing.
            client.startReading(timeout: nil)
        case let .awaitRequestHead(idle):
            awaitRequestHead(idle: idle)
        case .readRequestHead:
            readRequestHead()
        case let .acquireUpstream(endpoint, rule):
            acquireUpstream(endpoint, rule: rule)
        case .reconnectUpstream:
            if let exchange { connect(exchange) }
        case let .recordViolation(blocking):
            recordViolation(blocking: blocking)
        case let .sendRequestHead(bytes):
            exchange?.upstream?.stream.write(bytes)
        case let .sendInterimResponse(bytes):
            client.write(bytes)
            client.flush()
        case let .consumeResponseHead(count):
            exchange?.upstream?.stream.input.drain(count)
        case let .sendResponseHead(bytes, framing, dropsChunkFraming):
            client.write(bytes)
            exchange?.responseBody = BodyRelay(framing: framing, dropsChunkFraming: dropsChunkFraming)
        case .relayRequestBody:
            pumpRequestBody()
        case .relayResponse:
            relayResponse()
        case let .releaseUpstream(reuse):
            releaseUpstream(reuse: reuse)
        case let .answerAndClose(reason):
            finish(reason, answering: true)
        case let .close(reason):
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
            RequestHeadParser.parse($0, limits: limits)
        }
        handle(.requestHead(result, buffered: buffered, rules: configuration.rules, draining: worker.isDraining))
    }

    // MARK: the upstream

    private func acquireUpstream(_ endpoint: Endpoint, rule: String) {
        let configuration = worker.configuration
        guard let progress = machine.exchange, let policy = configuration.policy(forRule: rule) else { return }
        let exchange = Exchange(request: progress.request, upstream: endpoint, policy: policy, configuration: configuration)
        self.exchange = exchange
        // SPEC §3: chunk framing that arrived with the head is checked before anything goes upstream.
        if let error = exchange.requestBody.bufferedFramingError(in: client.input) {
            return handle(.requestBody(.invalid(error)))
        }
        if let pooled = worker.pool.take(exchange.poolKey) {
            attach(pooled, to: exchange, pooled: true, reported: false)
        } else {
            connect(exchange)
        }
    }

    private func connect(_ exchange: Exchange) {
        let configuration = exchange.configuration.configuration
        let target = exchange.poolKey.endpoint
        exchange.connector = UpstreamConnector(
            loop: worker.loop, resolver: worker.resolver, pool: worker.pool, target: target,
            connectTo: configuration.resolveOverrides[target], key: exchange.poolKey, policy: exchange.policy,
            timeouts: configuration.timeouts, resumesSessions: configuration.upstreamReuse.tlsSessions
        ) { [weak self, weak exchange] result in
            guard let self, let exchange, self.exchange === exchange else { return }
            exchange.connector = nil
            switch result {
            case let .success(success):
                exchange.verdict = success.reported
                self.attach(success.connection, to: exchange, pooled: false, reported: success.reported != nil)
            case let .failure(failure):
                self.handle(.upstreamFailed(Self.kind(of: failure, in: exchange)))
            }
        }
    }

    private static func kind(of failure: UpstreamFailure, in exchange: Exchange) -> UpstreamFailureKind {
        switch failure {
        case let .dns(detail): return .dns(detail)
        case let .refused(detail): return .refused(detail)
        case let .timedOut(detail): return .timedOut(detail)
        case let .tls(detail): return .tls(detail)
        case let .blocked(verdict, peer):
            exchange.verdict = verdict
            exchange.blockedPeer = peer
            return .blocked(verdict.decision.reason ?? .chainUntrusted)
        }
    }

    /// Takes `connection` into the exchange, after checking the body bytes
    /// that came meanwhile (still nothing has gone upstream).
    private func attach(_ connection: UpstreamConnection, to exchange: Exchange, pooled: Bool, reported: Bool) {
        exchange.upstream = connection
        connection.delegate = self
        connection.stream.setWriteLowWatermark(0)
        connection.stream.startReading(timeout: connection.idleTimeout)
        if let error = exchange.requestBody.bufferedFramingError(in: client.input) {
            return handle(.requestBody(.invalid(error)))
        }
        handle(.upstreamReady(pooled: pooled, reported: reported))
    }

    private func releaseUpstream(reuse: Bool) {
        guard let exchange, let upstream = exchange.upstream else { return }
        exchange.upstream = nil
        client.setWriteLowWatermark(0)
        upstream.delegate = nil
        if reuse {
            upstream.completedExchanges += 1
            worker.pool.put(upstream, keepingAtMost: exchange.configuration.upstreamReuse.idlePerHost)
        } else {
            upstream.close()
        }
        if machine.exchange == nil { self.exchange = nil }
    }

    private func recordViolation(blocking: Bool) {
        guard let exchange, let verdict = exchange.verdict, let progress = machine.exchange,
              let peer = exchange.upstream?.peer ?? exchange.blockedPeer else { return }
        let event = exchange.violationEvent(verdict, peer: peer, progress: progress, client: clientAddress,
                                            listener: listener.name)
        worker.sendReport(event, verdict: verdict, policy: exchange.policy.policy)
        // A block's 502 leaves only once the event is durable on disk (SPEC §4).
        worker.record(event) { [weak self] in if blocking { self?.handle(.violationRecorded) } }
    }

    // MARK: the bodies

    func pumpRequestBody() {
        guard let exchange, let upstream = exchange.upstream, machine.exchange?.requestComplete == false else { return }
        let progress = exchange.requestBody.pump(from: client.input, to: upstream.stream.output)
        upstream.stream.flush()
        if progress == .needMore, upstream.stream.output.count >= RelayLimits.highWatermark {
            exchange.requestPaused = true
            client.stopReading()
            upstream.stream.setWriteLowWatermark(RelayLimits.lowWatermark)
        }
        handle(.requestBody(progress))
    }

    /// Parses the response head until a final one is sent, then moves the body.
    func relayResponse() {
        guard let exchange, let upstream = exchange.upstream else { return }
        guard var body = exchange.responseBody else {
            let limits = HeadLimits(maxHeaderBytes: exchange.configuration.limits.maxHeaderBytes,
                                    maxTargetBytes: exchange.configuration.limits.maxRequestTargetBytes)
            let method = machine.exchange?.request.method ?? "GET"
            let result = upstream.stream.input.withContiguousPrefix(count: limits.maxHeaderBytes + 1) {
                ResponseHeadParser.parse($0, requestMethod: method, limits: limits)
            }
            return handle(.responseHead(result))
        }
        let progress = body.pump(from: upstream.stream.input, to: client.output)
        exchange.responseBody = body
        // Before the watermark check: only what the socket refused counts, and
        // a pause leaves the write event armed so the drain resumes the relay.
        client.flush()
        if progress == .needMore, client.output.count >= RelayLimits.highWatermark {
            exchange.responsePaused = true
            upstream.stream.stopReading()
            client.setWriteLowWatermark(RelayLimits.lowWatermark)
        }
        handle(.responseBody(progress))
    }
}

import Foundation
import PinproxyCore

/// The upstream half of an exchange: connecting, relaying the request body,
/// parsing and relaying the response, and mapping failures to SPEC §3 answers.
extension ClientSession {
    func connect(_ exchange: Exchange) {
        let worker = loopWorker
        let configuration = exchange.configuration.configuration
        let target = exchange.routed.upstream
        exchange.connector = UpstreamConnector(
            loop: worker.loop, resolver: worker.resolver, pool: worker.pool, target: target,
            connectTo: configuration.resolveOverrides[target], key: exchange.poolKey, policy: exchange.policy,
            timeouts: configuration.timeouts, resumesSessions: configuration.upstreamReuse.tlsSessions
        ) { [weak self, weak exchange] result in
            guard let self, let exchange, self.currentExchange === exchange else { return }
            exchange.connector = nil
            switch result {
            case let .success(success):
                if let verdict = success.reported {
                    let event = self.violationEvent(for: exchange, verdict: verdict, peer: success.connection.peer)
                    self.loopWorker.record(event) {}
                    self.loopWorker.sendReport(event, verdict: verdict, policy: exchange.policy.policy)
                }
                self.attach(success.connection, to: exchange)
            case let .failure(failure):
                self.upstreamDidFail(failure, exchange: exchange)
            }
        }
    }

    /// Sends the request head on a verified connection and starts both relays.
    func attach(_ connection: UpstreamConnection, to exchange: Exchange) {
        if let error = exchange.requestBody.bufferedFramingError(in: clientBuffer.input) {
            // Body bytes that arrived while connecting: still nothing has gone upstream (SPEC §3).
            // The connection carried nothing of this exchange, but it is not pooled: simpler and rare.
            connection.delegate = nil
            connection.close()
            loopWorker.logger.log(.info, "http", "\(clientAddress): request body rejected: \(error.reason)")
            respond(with: CloseReason(.invalidRequest(error), in: .requestHead).answer!)
            return
        }
        exchange.upstream = connection
        connection.delegate = self
        if connection.completedExchanges == 0 {
            // Once per connection: the same limits serve it in use and idle in the pool.
            let timeouts = exchange.configuration.timeouts
            connection.bufferEvent.setReadHighWatermark(ClientSession.highWatermark)
            connection.bufferEvent.setTimeouts(read: timeouts.idle, write: timeouts.idle)
        }
        connection.bufferEvent.setWriteLowWatermark(0)
        // Reading only: enabling EV_WRITE would arm EPOLLOUT for nothing. The
        // head goes out with SSL_write now; what cannot is queued with EV_WRITE on.
        connection.bufferEvent.enableRead()
        connection.bufferEvent.writeTLSNow(UpstreamRequestWriter.serialise(exchange.request, routed: exchange.routed))
        if exchange.request.continueIsForProxy && clientHTTPVersion == .http11 && !exchange.requestComplete {
            // The expectation was addressed to pinproxy (not forwarded): the
            // request is on its way, so answer it (RFC 9110 §10.1.1).
            clientBuffer.write(Self.continueResponse)
            clientBuffer.flushOutput()
        }
        pumpRequestBody()
        relayResponse()
    }

    /// pinproxy's own interim answer to an expectation addressed to it.
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    func pumpRequestBody() {
        guard let exchange = currentExchange, let upstream = exchange.upstream, !exchange.requestComplete else { return }
        let client = clientBuffer
        let progress = exchange.requestBody.pump(from: client.input, to: upstream.bufferEvent.output)
        if upstream.bufferEvent.outputLength > 0 { upstream.bufferEvent.enableWrite() }
        switch progress {
        case .complete:
            exchange.requestComplete = true
            finishIfDone(exchange)
        case let .invalid(error):
            loopWorker.logger.log(.info, "http", "\(clientAddress): request body rejected: \(error.reason)")
            respond(with: CloseReason(.invalidRequest(error), in: .requestHead).answer!)
        case .needMore:
            if clientHasClosedReading { close(); return }
            if upstream.bufferEvent.outputLength >= ClientSession.highWatermark {
                exchange.requestPaused = true
                client.disableRead()
                upstream.bufferEvent.setWriteLowWatermark(ClientSession.lowWatermark)
            }
        }
    }

    func relayResponse() {
        guard let exchange = currentExchange, let upstream = exchange.upstream else { return }
        let client = clientBuffer
        // Whatever this step queued (a 1xx, a head) leaves now, not a loop turn later.
        defer { client.flushOutput() }
        let limits = exchange.configuration.limits
        while exchange.responseBody == nil {
            let headLimits = HeadLimits(maxHeaderBytes: limits.maxHeaderBytes, maxTargetBytes: limits.maxRequestTargetBytes)
            let result = ByteBuffer.withContiguousPrefix(upstream.bufferEvent.input, count: limits.maxHeaderBytes + 1) {
                ResponseHeadParser.parse($0, requestMethod: exchange.request.method, limits: headLimits)
            }
            switch result {
            case .incomplete:
                return
            case let .invalid(error):
                upstreamProtocolError(exchange, reason: error.reason)
                return
            case let .complete(head, consumed):
                ByteBuffer.drain(upstream.bufferEvent.input, count: consumed)
                if head.isInformational {
                    // RFC 9110 §15.2: a 1.0 client must not receive 1xx responses.
                    if clientHTTPVersion == .http11 {
                        client.write(ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true))
                        exchange.responseStarted = true
                    }
                    continue
                }
                // An early final response (413 …) ends the connection: say so (RFC 9112 §9.6).
                let keepAlive = exchange.clientKeepAlive && head.bodyFraming != .untilClose && exchange.requestComplete
                    && !(clientHTTPVersion == .http10 && head.bodyFraming == .chunked)
                exchange.clientKeepAlive = keepAlive
                exchange.responseHead = head
                exchange.responseBody = BodyRelay(framing: head.bodyFraming,
                                                  dropsChunkFraming: clientHTTPVersion == .http10)
                client.write(ClientResponseWriter.serialise(head, clientVersion: clientHTTPVersion, keepAlive: keepAlive))
                exchange.responseStarted = true
            }
        }
        guard var body = exchange.responseBody, !exchange.responseComplete else { return }
        let progress = body.pump(from: upstream.bufferEvent.input, to: client.output)
        exchange.responseBody = body
        // Before the watermark check: only what the socket refused counts, and
        // a pause must leave EV_WRITE armed so the drain resumes the relay.
        client.flushOutput()
        switch progress {
        case .complete:
            exchange.responseComplete = true
            finishIfDone(exchange)
        case let .invalid(error):
            upstreamProtocolError(exchange, reason: error.reason)
        case .needMore:
            if client.outputLength >= ClientSession.highWatermark {
                exchange.responsePaused = true
                upstream.bufferEvent.disableRead()
                client.setWriteLowWatermark(ClientSession.lowWatermark)
            }
        }
    }

    /// Ends the exchange once both bodies are complete (or the response ended
    /// first, which leaves neither connection in a known state for reuse).
    func finishIfDone(_ exchange: Exchange) {
        guard exchange.responseComplete else { return }
        guard let upstream = exchange.upstream else { return }
        clientBuffer.setWriteLowWatermark(0)
        if !exchange.requestComplete {
            // An early final response (413, 401 …) while the upload went on.
            exchange.abandonUpstream()
            exchange.clientKeepAlive = false
            exchangeDidFinish(keepClientOpen: false)
            return
        }
        exchange.upstream = nil
        let reusable = exchange.responseHead?.wantsKeepAlive == true && exchange.responseBody?.isDelimitedByClose == false
        if reusable {
            upstream.completedExchanges += 1
            loopWorker.pool.put(upstream, keepingAtMost: exchange.configuration.upstreamReuse.idlePerHost)
        } else {
            upstream.delegate = nil
            upstream.close()
        }
        exchangeDidFinish(keepClientOpen: exchange.clientKeepAlive)
    }

    /// The upstream closed, failed or timed out during an exchange.
    func upstreamDidEnd(_ events: BufferEventEvents) {
        guard let exchange = currentExchange, let upstream = exchange.upstream else { return }
        if events.contains(.eof), !events.contains(.error), exchange.responseBody?.isDelimitedByClose == true {
            // Drain what arrived with the close, then the body is complete.
            relayResponse()
            exchange.responseComplete = true
            if !exchange.requestComplete { exchange.requestComplete = true }
            exchange.abandonUpstream()
            exchangeDidFinish(keepClientOpen: false)
            return
        }
        if exchange.responseStarted {
            // Mid-body: the client sees a truncated message (the connection closes).
            loopWorker.logger.log(.info, "proxy", "\(upstream.peer): upstream ended mid-response (\(events))")
            close()
            return
        }
        if exchange.isRetriableOnFreshConnection && upstream.bufferEvent.inputLength == 0 && !events.contains(.timeout) {
            // A pooled connection the server had closed: try once on a new one.
            exchange.abandonUpstream()
            exchange.usesPooledConnection = false
            connect(exchange)
            return
        }
        let tlsError = OpenSSLErrorText.describe(upstream.bufferEvent.openSSLError)
        if events.contains(.error), !tlsError.isEmpty {
            loopWorker.logger.log(.warning, "tls", "\(upstream.peer): \(tlsError)")
            respond(with: CloseReason(.tlsFailed(exchange.routed.upstream, detail: tlsError), in: .response).answer!)
        } else if events.contains(.timeout) {
            respond(with: CloseReason(.upstreamTimedOut(exchange.routed.upstream), in: .response).answer!)
        } else {
            respond(with: CloseReason(.upstreamClosed(exchange.routed.upstream), in: .response).answer!)
        }
    }

    private func upstreamProtocolError(_ exchange: Exchange, reason: String) {
        loopWorker.logger.log(.warning, "proxy", "\(exchange.routed.upstream): invalid response: \(reason)")
        respond(with: CloseReason(.invalidResponse(exchange.routed.upstream, reason: reason), in: .response).answer!)
    }

    private func upstreamDidFail(_ failure: UpstreamFailure, exchange: Exchange) {
        let upstream = exchange.routed.upstream
        switch failure {
        case let .dns(detail):
            loopWorker.logger.log(.info, "dns", detail)
            respond(with: CloseReason(.dnsFailed(upstream, detail: detail), in: .connect).answer!)
        case let .refused(detail):
            loopWorker.logger.log(.info, "connect", detail)
            respond(with: CloseReason(.connectionRefused(upstream, detail: detail), in: .connect).answer!)
        case let .timedOut(detail):
            loopWorker.logger.log(.info, "connect", detail)
            respond(with: CloseReason(.connectTimedOut(upstream, detail: detail), in: .connect).answer!)
        case let .tls(detail):
            loopWorker.logger.log(.warning, "tls", "\(upstream): \(detail)")
            respond(with: CloseReason(.tlsFailed(upstream, detail: detail), in: .connect).answer!)
        case let .blocked(verdict, peer):
            let event = violationEvent(for: exchange, verdict: verdict, peer: peer)
            let reason = verdict.decision.reason?.rawValue ?? "policy"
            loopWorker.logger.log(.warning, "trust", "\(upstream) blocked: \(reason)")
            loopWorker.sendReport(event, verdict: verdict, policy: exchange.policy.policy)
            // The 502 leaves only once the event is durable on disk (SPEC §4).
            loopWorker.record(event) { [weak self] in
                self?.respond(with: CloseReason(.trustBlocked(upstream, verdict.decision.reason ?? .chainUntrusted), in: .connect).answer!)
            }
        }
    }

    func violationEvent(for exchange: Exchange, verdict: TrustVerdict, peer: SocketAddress) -> ViolationEvent {
        let policy = exchange.policy
        return ViolationEvent(
            time: Date(), action: verdict.decision.permitsRelay ? .reported : .blocked,
            reason: verdict.decision.reason ?? .chainUntrusted,
            host: exchange.routed.upstream.host.value, port: exchange.routed.upstream.port,
            peerAddress: peer.description, rule: policy.ruleName, policy: policy.policy.kind,
            enforce: policy.policy.enforce, includeSubdomains: policy.policy.includeSubdomains,
            knownPins: policy.knownPins, servedChain: verdict.chain.served,
            clientAddress: clientAddress.description, listener: listener.name,
            configGeneration: exchange.configuration.generation,
            requestMethod: exchange.request.method, requestTarget: exchange.routed.pathWithoutQuery,
            detail: verdict.decision.detail ?? "")
    }
}

/// The exchange half of `SessionMachine`: bodies, the response head, and how
/// an exchange ends (RFC 9112 §6.3, §9.3, §9.6; RFC 9110 §15.2).
extension SessionMachine {
    mutating func requestBody(_ body: BodyProgress, into actions: inout [SessionAction]) {
        guard exchange?.requestComplete == false else { return }
        switch body {
        case .complete:
            exchange?.requestComplete = true
            if exchange?.request.wantsKeepAlive == false { clientSentItsLast = true }
            finishIfDone(into: &actions)
        case let .invalid(error):
            // Before the head went upstream nothing was sent (SPEC §3); after
            // it, the upstream connection is closed, never pooled.
            end(CloseReason(.invalidRequest(error), in: phase), into: &actions)
        case .needMore:
            // The client closed before its body was complete: nothing can finish it.
            if clientReadClosed { abort(CloseReason(.clientClosed, in: phase), into: &actions) }
        }
    }

    mutating func responseHead(_ result: HeadParseResult<HTTPResponseHead>, into actions: inout [SessionAction]) {
        // The upstream's endpoint is bound only where a failure names it (bound
        // here, it was copied out of the exchange for every response: callgrind,
        // 54 instructions per keep-alive request with responseBody's alike).
        guard case .attached? = exchange?.upstream, exchange?.responseHeadSent == false else { return }
        switch result {
        case .incomplete:
            return
        case let .invalid(error):
            guard let upstream = exchange?.routed.upstream else { return }
            return end(CloseReason(.invalidResponse(upstream, reason: error.reason), in: .response), into: &actions)
        case let .complete(head, consumed):
            if head.isInformational {
                // RFC 9110 §15.2: a 1.0 client must not receive 1xx responses.
                let relayed = clientVersion == .http11
                    ? ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true,
                                                     into: headBuffers.takeBytes())
                    : nil
                headBuffers.giveBack(head.fieldSection)
                if relayed != nil { exchange?.responseStarted = true }
                actions.append(.relayInterimResponse(relayed, consumedHead: consumed))
                return
            }
            // RFC 9112 §9.6: an early final response to an upload still under
            // way ends the connection (the rest of the body cannot be told
            // from a next request); a body delimited by close ends it too; a
            // chunked body cannot reach a 1.0 client except delimited by close.
            let dechunked = clientVersion == .http10 && head.bodyFraming == .chunked
            let keepAlive = exchange?.clientKeepAlive == true && head.bodyFraming != .untilClose
                && exchange?.requestComplete == true && !dechunked
            exchange?.clientKeepAlive = keepAlive
            exchange?.upstreamKeepsAlive = head.wantsKeepAlive && head.bodyFraming != .untilClose
            exchange?.responseDelimitedByClose = head.bodyFraming == .untilClose
            exchange?.clientBodyEndsAtClose = head.bodyFraming == .untilClose || dechunked
            exchange?.responseStarted = true
            exchange?.responseHeadSent = true
            exchange?.responseStatus = head.status
            let serialised = ClientResponseWriter.serialise(
                head, clientVersion: clientVersion, keepAlive: keepAlive,
                into: headBuffers.takeBytes())
            headBuffers.giveBack(head.fieldSection)
            actions.append(.sendResponseHead(serialised, consumedHead: consumed, framing: head.bodyFraming,
                                             dropsChunkFraming: clientVersion == .http10))
        }
    }

    mutating func responseBody(_ body: BodyProgress, into actions: inout [SessionAction]) {
        guard exchange?.responseHeadSent == true, exchange?.responseComplete == false else { return }
        switch body {
        case .complete:
            exchange?.responseComplete = true
            finishIfDone(into: &actions)
        case let .invalid(error):
            guard let upstream = exchange?.routed.upstream else { return }
            end(CloseReason(.invalidResponse(upstream, reason: error.reason), in: .responseBody), into: &actions)
        case .needMore:
            break
        }
    }

    mutating func clientEnded(buffered: Int, into actions: inout [SessionAction]) {
        clientReadClosed = true
        switch state {
        case .awaitingHead:
            // Half-close: requests already buffered are still answered.
            if buffered == 0 {
                end(CloseReason(.completed, in: .idle), into: &actions)
            } else {
                actions.append(.readRequestHead)
            }
        case .exchanging:
            // The rest of the body may already be buffered (half-close after a
            // complete upload): the pump decides. Before the upstream is
            // attached, its attach pumps and the short body ends it then.
            if exchange?.requestComplete == false, case .attached? = exchange?.upstream { actions.append(.relayRequestBody) }
        case .clientHandshake, .tunnelling, .closed:
            // A tunnel's ends are its executor's; a handshake's failure comes as clientTLSFailed.
            break
        }
    }

    /// Ends the exchange once both bodies are complete: the upstream goes back
    /// to the pool when its response allowed it, and the client connection
    /// serves the next request or closes.
    mutating func finishIfDone(into actions: inout [SessionAction]) {
        guard exchange?.responseComplete == true else { return }
        guard exchange?.requestComplete == true else {
            // An early final response (413, 401 …) while the upload went on:
            // neither connection is at a message boundary.
            return end(CloseReason(.completed, in: .responseBody), into: &actions)
        }
        let keepAlive = exchange?.clientKeepAlive == true
        let reuse = exchange?.upstreamKeepsAlive == true
        state = .awaitingHead
        retireExchange()
        if keepAlive {
            actions.append(.nextRequest(reuseUpstream: reuse))
        } else {
            actions.append(.releaseUpstream(reuse: reuse))
            end(CloseReason(.completed, in: .responseBody), into: &actions)
        }
    }

    /// Ends the connection gracefully: `reason`'s answer goes out unless a
    /// response is already under way (then the connection is cut, as nothing
    /// meaningful can follow a partial response: `abort`), and it closes once
    /// its output is written, in stages when the client may still be sending
    /// (`closesInStages`). An attached upstream is closed, never pooled.
    mutating func end(_ reason: CloseReason, into actions: inout [SessionAction]) {
        guard exchange?.responseStarted != true || reason.answer == nil else { return abort(reason, into: &actions) }
        // Only after an answer, or a response relayed whole (phase
        // `responseBody`): an idle connection closed without either has
        // nothing to protect. (The client's state first: `answer` builds the
        // answer's text, and a close request ends here with its response.)
        closesInStages = !clientSentItsLast && !clientReadClosed
            && (reason.phase == .responseBody || reason.answer != nil)
        releaseAttachedUpstream(into: &actions)
        if exchange?.connect != nil, state == .exchanging, reason.answer != nil { refusedConnect = true }
        state = .closed
        retireExchange()
        actions.append(.answerAndClose(reason))
    }

    /// Ends the exchange; its request head's arrays go back to `headBuffers`.
    mutating func retireExchange() {
        if let section = exchange?.request.fieldSection { headBuffers.giveBack(section) }
        exchange = nil
    }

    /// Closes at once, dropping whatever is queued (the peer is gone, or the
    /// message it was getting can no longer be completed). A client whose
    /// response body ends at the close, and did not get all of it, is reset:
    /// RFC 9112 §8 has a client record a message cut by the close as
    /// incomplete, and a reset (or a TLS close without close_notify) is the
    /// only way it can tell. Any other client sees a cut from the framing
    /// (Content-Length or chunked) or from the missing response, and gets an
    /// ordinary close.
    mutating func abort(_ reason: CloseReason, into actions: inout [SessionAction]) {
        let resets = cutResponseNeedsReset
        releaseAttachedUpstream(into: &actions)
        state = .closed
        retireExchange()
        actions.append(resets ? .reset(reason) : .close(reason))
    }

    /// A close now would cut a response whose body reaches the client
    /// delimited by the close (`abort`): the connection must be reset.
    public var cutResponseNeedsReset: Bool {
        exchange?.clientBodyEndsAtClose == true && exchange?.responseComplete == false
    }

    private func releaseAttachedUpstream(into actions: inout [SessionAction]) {
        if case .attached? = exchange?.upstream { actions.append(.releaseUpstream(reuse: false)) }
    }
}

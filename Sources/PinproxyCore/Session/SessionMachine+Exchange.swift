/// The exchange half of `SessionMachine`: bodies, the response head, and how
/// an exchange ends (RFC 9112 §6.3, §9.3, §9.6; RFC 9110 §15.2).
extension SessionMachine {
    mutating func requestBody(_ body: BodyProgress, into actions: inout [SessionAction]) {
        guard case var .exchanging(progress) = state, !progress.requestComplete else { return }
        switch body {
        case .complete:
            progress.requestComplete = true
            state = .exchanging(progress)
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
        guard case var .exchanging(progress) = state, case .attached = progress.upstream, !progress.responseHeadSent
        else { return }
        let upstream = progress.routed.upstream
        switch result {
        case .incomplete:
            return
        case let .invalid(error):
            return end(CloseReason(.invalidResponse(upstream, reason: error.reason), in: .response), into: &actions)
        case let .complete(head, consumed):
            actions.append(.consumeResponseHead(count: consumed))
            if head.isInformational {
                // RFC 9110 §15.2: a 1.0 client must not receive 1xx responses.
                if clientVersion == .http11 {
                    actions.append(.sendInterimResponse(
                        ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true)))
                    progress.responseStarted = true
                }
                state = .exchanging(progress)
                actions.append(.relayResponse)
                return
            }
            // RFC 9112 §9.6: an early final response to an upload still under
            // way ends the connection (the rest of the body cannot be told
            // from a next request); a body delimited by close ends it too; a
            // chunked body cannot reach a 1.0 client except delimited by close.
            let dechunked = clientVersion == .http10 && head.bodyFraming == .chunked
            progress.clientKeepAlive = progress.clientKeepAlive && head.bodyFraming != .untilClose
                && progress.requestComplete && !dechunked
            progress.upstreamKeepsAlive = head.wantsKeepAlive && head.bodyFraming != .untilClose
            progress.responseDelimitedByClose = head.bodyFraming == .untilClose
            progress.responseStarted = true
            progress.responseHeadSent = true
            state = .exchanging(progress)
            actions.append(.sendResponseHead(
                ClientResponseWriter.serialise(head, clientVersion: clientVersion, keepAlive: progress.clientKeepAlive),
                framing: head.bodyFraming, dropsChunkFraming: clientVersion == .http10))
            actions.append(.relayResponse)
        }
    }

    mutating func responseBody(_ body: BodyProgress, into actions: inout [SessionAction]) {
        guard case var .exchanging(progress) = state, progress.responseHeadSent, !progress.responseComplete else { return }
        switch body {
        case .complete:
            progress.responseComplete = true
            state = .exchanging(progress)
            finishIfDone(into: &actions)
        case let .invalid(error):
            end(CloseReason(.invalidResponse(progress.routed.upstream, reason: error.reason), in: .responseBody),
                into: &actions)
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
        case let .exchanging(progress):
            // The rest of the body may already be buffered (half-close after a
            // complete upload): the pump decides. Before the upstream is
            // attached, its attach pumps and the short body ends it then.
            if !progress.requestComplete, case .attached = progress.upstream { actions.append(.relayRequestBody) }
        case .closed:
            break
        }
    }

    /// Ends the exchange once both bodies are complete: the upstream goes back
    /// to the pool when its response allowed it, and the client connection
    /// serves the next request or closes.
    mutating func finishIfDone(into actions: inout [SessionAction]) {
        guard case let .exchanging(progress) = state, progress.responseComplete else { return }
        guard progress.requestComplete else {
            // An early final response (413, 401 …) while the upload went on:
            // neither connection is at a message boundary.
            return end(CloseReason(.completed, in: .responseBody), into: &actions)
        }
        actions.append(.releaseUpstream(reuse: progress.upstreamKeepsAlive))
        state = .awaitingHead
        if progress.clientKeepAlive {
            actions.append(.readRequestHead)
        } else {
            end(CloseReason(.completed, in: .responseBody), into: &actions)
        }
    }

    /// Ends the connection gracefully: `reason`'s answer goes out unless a
    /// response is already under way (then the connection is cut, as nothing
    /// meaningful can follow a partial response), and it closes once its
    /// output is written. An attached upstream is closed, never pooled.
    mutating func end(_ reason: CloseReason, into actions: inout [SessionAction]) {
        releaseAttachedUpstream(into: &actions)
        let cut = exchange?.responseStarted == true && reason.answer != nil
        state = .closed
        actions.append(cut ? .close(reason) : .answerAndClose(reason))
    }

    /// Closes at once, dropping whatever is queued (the peer is gone, or the
    /// message it was getting can no longer be completed).
    mutating func abort(_ reason: CloseReason, into actions: inout [SessionAction]) {
        releaseAttachedUpstream(into: &actions)
        state = .closed
        actions.append(.close(reason))
    }

    private func releaseAttachedUpstream(into actions: inout [SessionAction]) {
        if case let .exchanging(progress) = state, case .attached = progress.upstream {
            actions.append(.releaseUpstream(reuse: false))
        }
    }
}

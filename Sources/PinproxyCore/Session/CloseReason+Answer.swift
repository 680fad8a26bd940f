/// The one table from why a connection ends to what the client is told and
/// how the end is logged (SPEC §3's status table, RFC 9209 `Proxy-Status`).
extension CloseReason {
    /// How loudly an end is logged: routine ends are debug, a client's mistake
    /// or an unreachable upstream info, a policy block or a broken upstream a
    /// warning (an operator should look).
    public enum Severity: Sendable, Hashable {
        case debug, info, warning
    }

    /// The answer to send when no byte of a response has gone to the client
    /// yet; nil when the connection just closes (a routine end, a client that
    /// is gone or sent nothing, a response already under way).
    public var answer: ProxyAnswer? {
        switch cause {
        case .completed, .clientClosed, .clientTimedOut, .upstreamEndedMidResponse, .upstreamTruncatedResponse:
            return nil
        case .requestHeadTimedOut:
            return ProxyAnswer(status: 408, proxyStatusError: .httpRequestError, message: "The request header did not arrive in time.")
        case let .invalidRequest(error):
            return Self.refusal(error)
        case let .finalRecipient(method, reflected):
            // RFC 9110 §9.3.8: a TRACE is reflected as `message/http`; an OPTIONS
            // answer has no content, and no `Allow`: the methods the origin takes are its own.
            return .finalRecipient(content: reflected, contentType: method == "TRACE" ? "message/http" : nil)
        case let .requestDenied(host):
            return ProxyAnswer(status: 403, proxyStatusError: .httpRequestDenied,
                               message: "\(host) is not an allowed upstream (default_policy is deny).")
        case .proxyLoop:
            return ProxyAnswer(status: 508, proxyStatusError: .proxyLoopDetected,
                               message: "The request is addressed to pinproxy itself.")
        case .connectionLimit:
            return ProxyAnswer(status: 503, proxyStatusError: .connectionLimitReached, message: "Too many connections.")
        case .shuttingDown:
            return ProxyAnswer(status: 503, proxyStatusError: .proxyInternalResponse, message: "pinproxy is shutting down.")
        case let .dnsFailed(upstream, _):
            return ProxyAnswer(status: 502, proxyStatusError: .dnsError,
                               message: "The upstream host name \(upstream.host) could not be resolved.")
        case let .connectionRefused(upstream, _):
            return ProxyAnswer(status: 502, proxyStatusError: .connectionRefused,
                               message: "The upstream \(upstream) refused the connection.")
        case let .connectTimedOut(upstream, _):
            return ProxyAnswer(status: 504, proxyStatusError: .connectionTimeout,
                               message: "Connecting to the upstream \(upstream) timed out.")
        case let .tlsFailed(upstream, detail):
            // The detail is OpenSSL's or pinproxy's words about the handshake
            // (never peer data): what a client's operator needs to fix it.
            return ProxyAnswer(status: 502, proxyStatusError: .tlsProtocolError,
                               message: "The TLS connection to the upstream \(upstream) failed: \(detail).")
        case let .trustBlocked(upstream, reason):
            return ProxyAnswer(status: 502, proxyStatusError: .tlsCertificateError, details: reason.rawValue,
                               message: "pinproxy blocked \(upstream): its certificate failed the trust policy (\(reason.rawValue)).")
        case .upstreamClosed:
            return ProxyAnswer(status: 502, proxyStatusError: .connectionTerminated,
                               message: "The upstream closed the connection before answering.")
        case .upstreamTimedOut:
            return ProxyAnswer(status: 504, proxyStatusError: .httpResponseTimeout,
                               message: "The upstream did not answer in time.")
        case let .invalidResponse(_, reason):
            return ProxyAnswer(status: 502, proxyStatusError: .httpProtocolError, details: reason,
                               message: "The upstream sent an invalid or ambiguous response.")
        case let .connectPortDenied(target):
            return ProxyAnswer(status: 403, proxyStatusError: .httpRequestDenied, details: "port not allowed",
                               message: "CONNECT to port \(target.port) is not allowed (connect_ports).")
        case let .interceptionNotConfigured(host):
            return ProxyAnswer(status: 403, proxyStatusError: .httpRequestDenied,
                               details: "interception not configured", message:
                "\(host) is pinned, and pinproxy can only enforce its pins on a connection it terminates: add "
                + "\"interception\": { \"ca_dir\": \"/var/lib/pinproxy/ca\" } to the configuration, run "
                + "`pinproxy ca init` and `pinproxy ca install`, or send plain http:// URLs through the proxy.")
        case let .interceptionNotCovered(host) where host.isIPAddress:
            // SPEC §3.1: the CA excludes every IP range; no `ca init` will ever cover one.
            return ProxyAnswer(status: 403, proxyStatusError: .httpRequestDenied,
                               details: "not covered by the interception CA", message:
                "\(host) is an IP address, and the interception CA excludes every IP address: a CONNECT to it "
                + "is never intercepted. Connect by a host name listed in \"hosts\", or send plain http:// URLs "
                + "through the proxy.")
        case let .interceptionNotCovered(host):
            return ProxyAnswer(status: 403, proxyStatusError: .httpRequestDenied,
                               details: "not covered by the interception CA", message:
                "\(host) is outside the names the interception CA may issue for: run `pinproxy ca init` to "
                + "issue the CA again for the configured hosts, then `pinproxy ca install`.")
        case let .tunnelCannotEnforce(host):
            return ProxyAnswer(status: 403, proxyStatusError: .httpRequestDenied,
                               details: "default_policy cannot be enforced on a tunnel", message:
                "\(host) is not listed, and default_policy is a policy that a blind tunnel cannot enforce: "
                + "list the host in \"hosts\" to have it intercepted.")
        case let .misdirected(host):
            return ProxyAnswer(status: 421, proxyStatusError: .httpRequestError,
                               message: "This connection is for \(host): send requests for other hosts on their own.")
        case .clientTLSFailed:
            return nil
        }
    }

    /// A refused request (RFC 9112), by status: the sentence says what pinproxy
    /// does instead, and `details` what it found (pinproxy's own words, never
    /// the request's bytes). A 4xx is `http_request_error`; the 501 for a
    /// transfer coding pinproxy does not relay is not a client error in RFC
    /// 9209's sense, so it is `proxy_internal_response`.
    private static func refusal(_ error: HTTPError) -> ProxyAnswer {
        let message = switch error.status {
        case 405: "pinproxy takes CONNECT on a forward listener only (https_proxy); this one takes plain requests for its own upstream."
        case 414: "The request target is longer than pinproxy accepts."
        case 431: "The request header section is larger than pinproxy accepts."
        case 501: "pinproxy only accepts the chunked transfer coding: \(error.reason)."
        default: "pinproxy refused a malformed or ambiguous request: \(error.reason)."
        }
        let type: ProxyStatusError = (400..<500).contains(error.status) ? .httpRequestError : .proxyInternalResponse
        return ProxyAnswer(status: error.status, proxyStatusError: type, details: error.reason, message: message)
    }

    public var severity: Severity {
        switch cause {
        case .completed, .clientClosed, .clientTimedOut, .shuttingDown, .finalRecipient: .debug
        case .requestHeadTimedOut, .invalidRequest, .requestDenied, .proxyLoop, .dnsFailed, .connectionRefused,
             .connectTimedOut, .upstreamClosed, .upstreamTimedOut, .connectPortDenied, .tunnelCannotEnforce, .misdirected: .info
        // A broken TLS stream is a warning whether or not a response was under way.
        case .upstreamEndedMidResponse(_, .tlsFailed): .warning
        case .upstreamEndedMidResponse: .info
        case .connectionLimit, .tlsFailed, .trustBlocked, .invalidResponse, .interceptionNotConfigured,
             .interceptionNotCovered, .clientTLSFailed, .upstreamTruncatedResponse: .warning
        }
    }

    /// The log line's subsystem (`subsystem: message`).
    public var subsystem: String {
        switch cause {
        case .completed, .clientClosed, .clientTimedOut, .requestHeadTimedOut, .invalidRequest, .finalRecipient,
             .requestDenied, .proxyLoop, .connectionLimit, .shuttingDown, .misdirected: "http"
        case .connectPortDenied, .interceptionNotConfigured, .interceptionNotCovered, .tunnelCannotEnforce: "connect"
        case .clientTLSFailed: "tls"
        case .dnsFailed: "dns"
        case .connectionRefused, .connectTimedOut: "connect"
        case .tlsFailed, .upstreamEndedMidResponse(_, .tlsFailed): "tls"
        case .trustBlocked: "trust"
        case .upstreamClosed, .upstreamTimedOut, .invalidResponse, .upstreamEndedMidResponse,
             .upstreamTruncatedResponse: "proxy"
        }
    }

    /// What happened, for the log: never a query string, header or body.
    public var logMessage: String {
        switch cause {
        case .completed: "connection ended"
        case .clientClosed: "client closed with an exchange unfinished"
        case .clientTimedOut: "client idle past its timeout"
        case .requestHeadTimedOut: "request header not complete in time (408)"
        case let .invalidRequest(error): "request rejected (\(error.status)): \(error.reason)"
        case let .finalRecipient(method, _): "\(method) with Max-Forwards: 0 answered by pinproxy (200)"
        case let .requestDenied(host): "\(host) denied by default_policy (403)"
        case .proxyLoop: "request addressed to pinproxy itself (508)"
        case .connectionLimit: "limits.max_connections reached (503)"
        case .shuttingDown: "shutting down (503)"
        case let .dnsFailed(upstream, detail): "\(upstream.host): \(detail)"
        case let .connectionRefused(upstream, detail), let .connectTimedOut(upstream, detail),
             let .tlsFailed(upstream, detail): "\(upstream): \(detail)"
        case let .trustBlocked(upstream, reason): "\(upstream) blocked: \(reason.rawValue)"
        case let .upstreamClosed(upstream, how): Self.ending(of: upstream, how, "before answering")
        case let .upstreamTimedOut(upstream): "\(upstream) did not answer in time"
        case let .invalidResponse(upstream, reason): "\(upstream): invalid response: \(reason)"
        case let .upstreamEndedMidResponse(upstream, how): Self.ending(of: upstream, how, "mid-response")
        case let .upstreamTruncatedResponse(upstream):
            "\(upstream) ended a body delimited by the close without TLS close_notify: taken as cut, the client is reset"
        case let .connectPortDenied(target): "CONNECT \(target) refused: port not in connect_ports (403)"
        case let .interceptionNotConfigured(host): "CONNECT \(host) refused: pinned, and interception is not configured (403)"
        case let .interceptionNotCovered(host) where host.isIPAddress:
            "CONNECT \(host) refused: an IP address is never intercepted, the CA excludes every IP address (403)"
        case let .interceptionNotCovered(host): "CONNECT \(host) refused: outside the interception CA's names (403); run pinproxy ca init"
        case let .tunnelCannotEnforce(host): "CONNECT \(host) refused: default_policy cannot be enforced on a tunnel (403)"
        case let .clientTLSFailed(host, detail): "client TLS for \(host) failed: \(detail)"
        case let .misdirected(host): "request for another host inside the tunnel for \(host) (421)"
        }
    }

    /// How an upstream connection ended, `when` ("before answering",
    /// "mid-response"): a failure in the system's or OpenSSL's words.
    private static func ending(of upstream: Endpoint, _ how: UpstreamEnd.Cause, _ when: String) -> String {
        switch how {
        case .closeNotify: "\(upstream) closed (close_notify) \(when)"
        case .incompleteClose: "\(upstream) ended \(when) without TLS close_notify"
        case let .socketFailed(detail), let .tlsFailed(detail): "\(upstream) failed \(when): \(detail)"
        case .timedOut: "\(upstream) sent nothing \(when) for timeouts.idle"
        }
    }
}

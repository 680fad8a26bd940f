/// The CONNECT half of `SessionMachine` (RFC 9110 §9.3.6, SPEC §3.1): which
/// CONNECT becomes an intercepted tunnel (upstream verified before the
/// `200`, then the client's TLS terminated here), which a blind one, and
/// which is refused; and the requests inside an intercepted tunnel.
extension SessionMachine {
    /// The answer that opens a tunnel.
    static let connectEstablished: [UInt8] = Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)

    /// A complete CONNECT head on a forward listener, outside an intercepted
    /// tunnel. Anywhere else (a gateway; inside a tunnel, whose requests are
    /// for its origin) a CONNECT is routed as a request, and routing refuses
    /// it (`RequestRouter`: 405), in one place with one reason.
    mutating func beginConnect(_ head: HTTPRequestHead, consumed: Int, rules: RequestRules,
                               into actions: inout [SessionAction]) {
        let target: Endpoint
        switch RequestRouter.routeConnect(head) {
        case let .failure(error):
            refusedConnect = true
            return end(CloseReason(.invalidRequest(error), in: .requestHead), into: &actions)
        case let .success(endpoint): target = endpoint
        }
        if rules.isOwnListener(target) {
            refusedConnect = true
            return end(CloseReason(.proxyLoop, in: .requestHead), into: &actions)
        }
        // The violation log's `request.target` of a CONNECT is its authority.
        let routed = RoutedRequest(upstream: target, originFormTarget: target.description)
        switch rules.connectDisposition(for: target) {
        case let .refuse(cause):
            refusedConnect = true
            end(CloseReason(cause, in: .requestHead), into: &actions)
        case let .intercept(rule):
            exchange = ExchangeProgress(request: head, routed: routed, rule: rule, clientKeepAlive: false, connect: .intercept)
            state = .exchanging
            actions.append(.startExchange(consumedHead: consumed, upstream: target, rule: rule))
        case let .tunnel(rule):
            exchange = ExchangeProgress(request: head, routed: routed, rule: rule, clientKeepAlive: false, connect: .tunnel)
            state = .exchanging
            actions.append(.openTunnel(consumedHead: consumed, upstream: target, rule: rule))
        }
    }

    /// The verified upstream of an intercepted CONNECT is ready: the client
    /// gets its `200`, and its TLS is terminated for the CONNECT host. No TLS
    /// is spoken with the client before the verdict (a block is a plain 502).
    /// The CONNECT's exchange stays until the client's handshake ends: a
    /// report-only verdict is recorded from it, and a failure aborts it.
    mutating func interceptionReady(reported: Bool, into actions: inout [SessionAction]) {
        guard let host = exchange?.routed.upstream.host else { return }
        exchange?.upstream = .attached(pooled: false)
        if reported { actions.append(.recordViolation(blocking: false)) }
        state = .clientHandshake
        actions.append(.beginInterception(Self.connectEstablished, host: host))
    }

    mutating func clientTLSReady(into actions: inout [SessionAction]) {
        guard state == .clientHandshake else { return }
        state = .awaitingHead
        retireExchange()
        actions.append(.readRequestHead)
    }

    mutating func tunnelOpened(into actions: inout [SessionAction]) {
        guard exchange?.connect == .tunnel, exchange?.upstream == .acquiring else { return }
        state = .tunnelling
        retireExchange()
        actions.append(.beginTunnel(Self.connectEstablished))
    }

    /// Where a request inside an intercepted tunnel goes: the tunnel's origin,
    /// and only it (RFC 9110 §7.4: a request for another authority is 421).
    static func routeInside(_ head: HTTPRequestHead, to upstream: Endpoint) -> Routing {
        if let field = head.fieldSection.values(of: .host).first,
           case let .success(named) = RequestAuthority.endpoint(Substring(field)), named.host != upstream.host {
            return .refused(.misdirected(upstream.host))
        }
        return Routing(RequestRouter.routeGateway(head, upstream: upstream))
    }
}

/// Where a request goes, or why it goes nowhere.
enum Routing {
    case routed(RoutedRequest)
    case refused(CloseReason.Cause)

    init(_ result: Result<RoutedRequest, HTTPError>) {
        switch result {
        case let .success(routed): self = .routed(routed)
        case let .failure(error): self = .refused(.invalidRequest(error))
        }
    }
}

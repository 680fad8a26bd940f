import Foundation
import PinproxyCore

/// Acquiring the exchange's upstream connection: from the pool, or made by an
/// `UpstreamConnector` (DNS, TCP, TLS with the policy's check inside the
/// handshake), and attaching it once nothing of the request is left to check.
extension ClientSession {
    func acquireUpstream(_ endpoint: Endpoint, rule: String) {
        let configuration = worker.configuration
        guard let framing = machine.exchange?.request.bodyFraming, let policy = configuration.policy(forRule: rule) else { return }
        let poolKey = worker.pool.key(host: endpoint.host, port: endpoint.port, rule: policy.ruleName,
                                      generation: configuration.generation)
        let exchange = Exchange(bodyFraming: framing, poolKey: poolKey, policy: policy, configuration: configuration)
        self.exchange = exchange
        policy.counters.lane(worker.index).requests.add()
        beginAccessRecord(target: endpoint, rule: rule)
        // SPEC §3: chunk framing that arrived with the head is checked before anything goes upstream.
        if let error = exchange.bufferedRequestFramingError(in: client) {
            return handle(.requestBody(.invalid(error)))
        }
        if let reserved = takeReservedUpstream(for: exchange.poolKey) {
            // The connection verified before the CONNECT's 200 (SPEC §3.1). It
            // waited through the client's handshake: a close meanwhile is retried as for a pooled one.
            attach(reserved, to: exchange, pooled: true, reported: false)
        } else if let pooled = worker.pool.take(exchange.poolKey) {
            attach(pooled, to: exchange, pooled: true, reported: false)
        } else {
            connect(exchange)
        }
    }

    func connect(_ exchange: Exchange) {
        let configuration = exchange.configuration.configuration
        let target = exchange.poolKey.endpoint
        exchange.connector = UpstreamConnector(
            loop: worker.loop, resolver: worker.resolver, pool: worker.pool, target: target,
            connectTo: configuration.resolveOverrides[target], key: exchange.poolKey, policy: exchange.policy,
            timeouts: configuration.timeouts, resumesSessions: configuration.upstreamReuse.tlsSessions, lane: worker.index
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
        if access != nil { access?.upstream = pooled ? .reused : connection.stream.resumedSession ? .resumed : .new }
        connection.delegate = self
        connection.stream.setWriteLowWatermark(0)
        connection.stream.startReading(timeout: connection.idleTimeout)
        // The exchange has the whole timeouts.idle from now: a pooled connection's
        // timer has been counting its idle time since the last response (and a
        // new one's its handshake, when timeouts.handshake is as long).
        connection.stream.restartReadTimeout()
        if let error = exchange.bufferedRequestFramingError(in: client) {
            return handle(.requestBody(.invalid(error)))
        }
        handle(.upstreamReady(pooled: pooled, reported: reported))
    }
}

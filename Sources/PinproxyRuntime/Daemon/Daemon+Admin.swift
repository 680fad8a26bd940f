import Foundation
import PinproxyCore

/// The admin listener's answers (SPEC §6), on loop 0: a snapshot of every
/// loop's counters (read, not locked, while the loops go on), as Prometheus
/// text or as the status document.
extension Daemon {
    func startAdmin(_ admin: AdminListener) throws {
        let address = try ListeningSockets.socketAddress(
            of: ListenerConfiguration(address: admin.address, mode: .forward, allowRemote: admin.allowRemote))
        adminServer = try AdminServer(loop: workers[0].loop, address: address, logger: logger) { [unowned self] head in
            self.adminAnswer(head)
        }
    }

    /// `ip:port` of the admin listener as bound; nil without one.
    public var adminAddress: String? { adminServer?.boundAddress.description }

    func adminAnswer(_ head: HTTPRequestHead) -> AdminAnswer {
        guard head.method == "GET" || head.method == "HEAD" else {
            return .text(405, "the admin listener is read-only: GET /metrics or GET /status",
                         extraFields: [("Allow", "GET, HEAD")])
        }
        // The query, if any, is ignored (and never logged).
        let path = head.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        switch path {
        case "/metrics":
            let text = PrometheusExposition.render(metricsSnapshot(), openSSL: RuntimeVersion.openSSL,
                                                   libevent: RuntimeVersion.libevent)
            return AdminAnswer(status: 200, contentType: PrometheusExposition.contentType, body: Array(text.utf8))
        case "/status":
            let now = Date()
            return AdminAnswer(status: 200, contentType: "application/json",
                               body: StatusDocument.render(metricsSnapshot(), warnings: driftWarnings(at: now), now: now))
        default:
            return .text(404, "not here: GET /metrics or GET /status")
        }
    }

    func metricsSnapshot() -> MetricsSnapshot {
        let configuration = workers[0].configuration
        let (listeners, rules) = shared.metrics.samples(for: configuration, boundListeners: workers[0].boundAddresses.sorted())
        let log = shared.violations.logQueue
        var snapshot = MetricsSnapshot(
            version: options.version, generation: configuration.generation, startedAt: shared.startedAt,
            activeConnections: shared.openConnections.load(ordering: .relaxed), listeners: listeners, rules: rules,
            idleUpstreamConnections: workers.reduce(0) { $0 + Int($1.pool.idleCount.current) },
            violationLogQueued: log.queued, violationLogWriteErrors: log.writeErrors, violationLogDropped: log.dropped,
            interceptionCAExpiry: configuration.interception?.notAfter)
        snapshot.customChecks = configuration.customChecks.snapshot
        return snapshot
    }
}

import Foundation
import PinproxyCore

/// The access-log line of the exchange or CONNECT under way (SPEC §6),
/// filled in as it goes; made only when `access_log` is on. A class: the
/// request path tests `access != nil` on every exchange, which for an
/// optional struct of strings would copy it.
final class AccessRecord {
    let started = ContinuousClock.now
    let time = Date()
    let transport: AccessLogEntry.Transport
    let method: String
    let target: Endpoint
    let rule: String
    var status = 0
    var upstream = AccessLogEntry.Upstream.none
    var bytesUp: UInt64 = 0
    var bytesDown: UInt64 = 0

    init(transport: AccessLogEntry.Transport, method: String, target: Endpoint, rule: String) {
        self.transport = transport
        self.method = method
        self.target = target
        self.rule = rule
    }

    func countBodies(of exchange: Exchange) {
        bytesUp = exchange.requestBody.movedBytes
        bytesDown = exchange.responseBody?.movedBytes ?? 0
    }

    func countBytes(of tunnel: SplicedTunnel) {
        bytesUp = UInt64(tunnel.bytesUp)
        bytesDown = UInt64(tunnel.bytesDown)
    }

    func entry(client: SocketAddress, listener: String) -> AccessLogEntry {
        AccessLogEntry(time: time, clientAddress: client.description, listener: listener, transport: transport,
                       method: method, host: target.host.value, port: target.port, rule: rule, status: status,
                       bytesUp: bytesUp, bytesDown: bytesDown, duration: .now - started, upstream: upstream)
    }
}

extension ClientSession {
    /// Starts the record of the exchange (or CONNECT) the machine just began, when the access log is on.
    func beginAccessRecord(target: Endpoint, rule: String) {
        guard worker.shared.accessLog != nil, let progress = machine.exchange else { return }
        let transport: AccessLogEntry.Transport = progress.connect != nil ? .connect
            : machine.interceptedUpstream != nil ? .intercepted : .http
        access = AccessRecord(transport: transport, method: progress.request.method, target: target, rule: rule)
        if progress.connect == .tunnel { access?.upstream = .tunnel }
    }

    /// Writes the record's line; the record is done.
    func writeAccessRecord() {
        guard let record = access, let log = worker.shared.accessLog else { return }
        access = nil
        log.append(record.entry(client: clientAddress, listener: listener.name).jsonLine())
    }
}

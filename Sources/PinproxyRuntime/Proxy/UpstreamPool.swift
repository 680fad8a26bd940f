import Foundation
import PinproxyCore

/// Idle verified upstream connections and resumable TLS sessions of one event
/// loop, so there are no locks on the hot path.
///
/// An idle connection is watched: any byte or close from the server, or the
/// idle timeout, retires it. Keys carry the configuration generation, so a
/// reload retires what older policies verified simply by no longer matching;
/// `retire(before:)` frees them eagerly.
final class UpstreamPool: UpstreamConnectionDelegate {
    private var idle: [PoolKey: [UpstreamConnection]] = [:]
    private var sessions: [PoolKey: TLSSessionHandle] = [:]

    init() {}

    /// The most recently returned idle connection for `key`, if any.
    func take(_ key: PoolKey) -> UpstreamConnection? {
        guard var list = idle[key], let connection = list.popLast() else { return nil }
        idle[key] = list.isEmpty ? nil : list
        connection.delegate = nil
        return connection
    }

    /// Parks a connection whose exchange ended cleanly, unless `limit` idle
    /// connections for its key are parked already (`upstream_reuse.idle_per_host`).
    func put(_ connection: UpstreamConnection, keepingAtMost limit: Int) {
        guard connection.isOpen, connection.bufferEvent.inputLength == 0 else { connection.close(); return }
        var list = idle[connection.key] ?? []
        guard list.count < limit else { connection.close(); return }
        connection.delegate = self
        // The idle timeout set when the connection was attached still runs:
        // one setting for in use and idle saves an event_add per request.
        connection.bufferEvent.enableRead()
        list.append(connection)
        idle[connection.key] = list
    }

    func session(for key: PoolKey) -> TLSSessionHandle? { sessions[key] }

    func store(_ session: TLSSessionHandle, for key: PoolKey) { sessions[key] = session }

    func forgetSession(for key: PoolKey) { sessions[key] = nil }

    /// Frees every idle connection and session verified under an older generation.
    func retire(before generation: Int) {
        for (key, list) in idle where key.generation < generation {
            list.forEach { $0.close() }
            idle[key] = nil
        }
        sessions = sessions.filter { $0.key.generation >= generation }
    }

    /// Frees everything (shutdown).
    func closeAll() {
        idle.values.forEach { $0.forEach { $0.close() } }
        idle.removeAll()
        sessions.removeAll()
    }

    private func remove(_ connection: UpstreamConnection) {
        connection.close()
        guard var list = idle[connection.key], let index = list.firstIndex(where: { $0 === connection }) else { return }
        list.remove(at: index)
        idle[connection.key] = list.isEmpty ? nil : list
    }

    // An idle connection must stay silent: data, EOF, error or timeout retire it.
    func upstreamDidRead(_ connection: UpstreamConnection) { remove(connection) }
    func upstreamDidWrite(_ connection: UpstreamConnection) {}
    func upstream(_ connection: UpstreamConnection, didReport events: BufferEventEvents) { remove(connection) }
}

import Foundation
import PinproxyCore

/// Idle verified upstream connections and resumable TLS sessions of one event
/// loop, so there are no locks on the hot path.
///
/// An idle connection is watched: any byte or close from the server, or the
/// idle timeout, retires it. Keys carry the configuration generation, so what
/// an older generation verified no longer matches after a reload; `renew`
/// moves what the new generation verifies alike to its keys and frees the rest.
final class UpstreamPool: UpstreamConnectionDelegate {
    private var idle: [PoolKey: IdleConnections] = [:]
    /// The idle connections of the key `put` parked under last, kept out of
    /// `idle` (a key's connections are in exactly one of the two): a gateway,
    /// or a client kept alive to one host, takes and returns one connection
    /// under one key for every exchange, and finding it in `idle` hashed the
    /// key twice a request (`take` and `put`: some 700 instructions). The
    /// list stays here when emptied, its storage ready for the key's next `put`.
    private var frontList = IdleConnections()
    private var frontKey: PoolKey?
    private var sessions: [PoolKey: TLSSessionHandle] = [:]
    /// The key `key(host:port:rule:generation:)` made last.
    private var recentKey: PoolKey?
    /// How many connections are idle here, for a scrape on another thread (SPEC §6).
    let idleCount = Reading()
    /// The most sessions kept at once. Keys are per host, port, rule and
    /// generation, so a forward proxy sent to ever new hosts (any client may
    /// name them) would otherwise keep a session for each until the next
    /// reload, each holding the server's certificate chain.
    let sessionLimit: Int

    /// Per loop: at most 1,024 sessions, several KiB each (the chain OpenSSL
    /// keeps with a client session), a few MiB a loop at worst.
    static let defaultSessionLimit = 1_024

    /// The configuration generation whose keys the pool files under (`renew`
    /// moves it on). Read for every exchange that returns a connection:
    /// written only by `renew`, on this loop, so no dynamic exclusivity check.
    @exclusivity(unchecked) private(set) var generation: Int

    /// The milliseconds `IdleConnections` measures its periods in: the
    /// coarse monotonic clock, or a fixed one for a test whose order must not
    /// depend on how long the machine took between two takes.
    private let now: () -> Int64

    init(sessionLimit: Int = UpstreamPool.defaultSessionLimit, generation: Int = 1,
         now: @escaping () -> Int64 = IdleConnections.now) {
        precondition(sessionLimit > 0, "a session limit of at least one")
        self.sessionLimit = sessionLimit
        self.generation = generation
        self.now = now
    }

    /// The key of `host`, `port`, `rule` and `generation`: the one made for
    /// the last exchange when they are the same (a gateway's every request,
    /// a keep-alive client's next one), else a new one. Comparing the two
    /// strings (a gateway's are the configuration's own, equal by identity)
    /// costs less than hashing them again for every request.
    func key(host: HostName, port: UInt16, rule: String, generation: Int) -> PoolKey {
        if let recentKey, recentKey.port == port, recentKey.generation == generation,
           recentKey.rule == rule, recentKey.host == host {
            return recentKey
        }
        let key = PoolKey(host: host, port: port, rule: rule, generation: generation)
        recentKey = key
        return key
    }

    /// An idle connection for `key`, if any: of those the load keeps in
    /// turn, the one idle longest (`IdleConnections`).
    ///
    /// Off the front list, or from `idle`: there `take`, `put` and `remove`
    /// probe the dictionary once and change the list in place through its
    /// index (no copy of the array), and an emptied list is removed, so a
    /// forward proxy visiting many hosts keeps no empty entries.
    func take(_ key: PoolKey) -> UpstreamConnection? {
        let taken: UpstreamConnection
        if key == frontKey {
            guard !frontList.isEmpty, let connection = frontList.take(at: now()) else { return nil }
            taken = connection
        } else {
            guard let index = idle.index(forKey: key),
                  let connection = idle.values[index].take(at: now()) else { return nil }
            if idle.values[index].isEmpty { idle.remove(at: index) }
            taken = connection
        }
        idleCount.set(idleCount.current - 1)
        taken.delegate = nil
        return taken
    }

    /// Parks a connection whose exchange ended cleanly, unless `limit` idle
    /// connections for its key are parked already (`upstream_reuse.idle_per_host`).
    func put(_ connection: UpstreamConnection, keepingAtMost limit: Int) {
        guard connection.isOpen, connection.stream.input.isEmpty, limit > 0 else { connection.close(); return }
        if connection.key != frontKey { bringToFront(connection.key) }
        guard frontList.count < limit else { connection.close(); return }
        frontList.append(connection)
        idleCount.set(idleCount.current + 1)
        connection.delegate = self
        // The idle timeout set when the connection was attached still runs,
        // restarted by the read that completed the response: the same timeout
        // for in use and idle, so reading goes on without re-arming it (and
        // `ClientSession.attach` restarts it for the next exchange).
        connection.stream.startReading(timeout: connection.idleTimeout)
    }

    /// Files the front list under its key in `idle` and makes `key`'s list
    /// (out of `idle`, or an empty one) the front.
    private func bringToFront(_ key: PoolKey) {
        fileFront()
        frontList = idle.removeValue(forKey: key) ?? IdleConnections()
        frontKey = key
    }

    /// The front list filed under its key in `idle`, so that a walk over
    /// `idle` sees every idle connection.
    private func fileFront() {
        if let frontKey, !frontList.isEmpty { idle[frontKey] = frontList }
        frontList = IdleConnections()
        frontKey = nil
    }

    func session(for key: PoolKey) -> TLSSessionHandle? { sessions[key] }

    /// Keeps `session` for `key`, in place of an older one. A new key when
    /// `sessionLimit` are kept evicts one at random: no order to keep up on
    /// the hot path, and no pattern of hosts that keeps one session out.
    /// (The walk to the chosen entry is nothing beside the full handshake
    /// that made the session.)
    func store(_ session: TLSSessionHandle, for key: PoolKey) {
        if sessions.count >= sessionLimit, sessions[key] == nil, let evicted = sessions.randomElement() {
            sessions[evicted.key] = nil
        }
        sessions[key] = session
    }

    /// How many sessions are kept (tests).
    var sessionCount: Int { sessions.count }

    func forgetSession(for key: PoolKey) { sessions[key] = nil }

    /// A reload to `generation`: the idle connections and sessions of older
    /// generations that `keepsConnection` / `keepsSession` name (verified
    /// alike by the new one) are filed under the new generation's keys; the
    /// rest are freed. Without this every reload cost each pooled host a
    /// full handshake (`bench/reload.sh`: p99 2.4-3.9 x across reloads of
    /// eleven rules).
    func renew(to generation: Int, keepsConnection: (PoolKey) -> Bool, keepsSession: (PoolKey) -> Bool) {
        self.generation = generation
        fileFront()
        for (key, list) in idle where key.generation < generation {
            idle[key] = nil
            guard keepsConnection(key) else {
                list.connections.forEach { $0.close() }
                idleCount.set(idleCount.current - Int64(list.count))
                continue
            }
            idle[key.renewed(generation: generation), default: IdleConnections()]
                .append(contentsOf: list.mapConnections { $0.renewed(generation: generation) })
        }
        for (key, session) in sessions where key.generation < generation {
            sessions[key] = nil
            if keepsSession(key) { sessions[key.renewed(generation: generation)] = session }
        }
        if let recentKey, recentKey.generation < generation { self.recentKey = nil }
    }

    /// Frees everything (shutdown).
    func closeAll() {
        fileFront()
        idle.values.forEach { $0.connections.forEach { $0.close() } }
        idle.removeAll()
        idleCount.set(0)
        sessions.removeAll()
        recentKey = nil
    }

    private func remove(_ connection: UpstreamConnection) {
        connection.close()
        if connection.key == frontKey {
            guard frontList.remove(connection) else { return }
        } else {
            guard let index = idle.index(forKey: connection.key), idle.values[index].remove(connection) else { return }
            if idle.values[index].isEmpty { idle.remove(at: index) }
        }
        idleCount.set(idleCount.current - 1)
    }

    // An idle connection must stay silent: data, EOF, error or timeout retire it.
    func upstreamDidRead(_ connection: UpstreamConnection) { remove(connection) }
    func upstreamDidDrain(_ connection: UpstreamConnection) {}
    func upstream(_ connection: UpstreamConnection, didEnd ending: StreamEnd) { remove(connection) }
}

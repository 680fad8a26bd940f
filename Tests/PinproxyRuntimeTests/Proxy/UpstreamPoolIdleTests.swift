import COpenSSL
import Foundation
import Glibc
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// Which idle connection `take` hands out, for which key, and what `put`,
/// a retirement, a reload and shutdown do to them: wherever the pool keeps a
/// key's list (the front list of the key parked last, or its table), a
/// connection is only ever handed out under the key that verified it.
/// Real TLS streams over socket pairs, no handshake: the pool never reads them.
@Suite("UpstreamPool: idle connections")
struct UpstreamPoolIdleTests {
    /// Makes unconnected upstream connections on one loop; closes the far ends.
    private final class Connections {
        let loop: EventLoop
        private let context: TLSClientContext
        private let material: PolicyMaterial
        private var farEnds: [Int32] = []

        init() throws {
            loop = try EventLoop()
            material = try PolicyMaterial.load(for: .standard)
            context = try TLSClientContext(policy: .standard, material: material, trustStore: TrustStore.anchors([]))
        }

        deinit { farEnds.forEach { close($0) } }

        func make(_ key: PoolKey) throws -> UpstreamConnection {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair") }
            farEnds.append(pair[1])
            _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
            guard let ssl = SSL_new(context.pointer) else { throw TestFailure("SSL_new") }
            SSL_set_fd(ssl, pair[0])
            let stream = try #require(TLSStream(loop: loop, descriptor: pair[0], connection: TLSConnection(takingOwnership: ssl), role: .client))
            let check = TrustCheck(policy: .standard, evaluator: DecidingEvaluator(decide: { _ in true }))
            let handshake = UpstreamHandshake(host: key.host, port: key.port, check: check, material: material)
            return UpstreamConnection(key: key, peer: try #require(SocketAddress(ip: "127.0.0.1", port: key.port)),
                                      stream: stream, handshake: handshake, idleTimeout: EventTimeout(.seconds(60)))
        }
    }

    private static func key(_ host: String, generation: Int = 1) -> PoolKey {
        PoolKey(host: HostName(host)!, port: 443, rule: host, generation: generation)
    }

    private let a = key("a.example.test"), b = key("b.example.test"), c = key("c.example.test")

    @Test("keys parked in turn each get back their own connections, oldest first, and nothing else")
    func eachKeyGetsItsOwn() throws {
        let connections = try Connections()
        // A clock that stands still: no demand period ends between the takes, however slow the run.
        let pool = UpstreamPool(now: { 0 })
        let a1 = try connections.make(a), b1 = try connections.make(b), a2 = try connections.make(a), c1 = try connections.make(c)
        for connection in [a1, b1, a2, c1] { pool.put(connection, keepingAtMost: 4) }
        #expect(pool.idleCount.current == 4)
        #expect(pool.take(b) === b1)
        #expect(pool.take(b) == nil)
        // The one idle longest.
        #expect(pool.take(a) === a1)
        pool.put(a1, keepingAtMost: 4)
        #expect(pool.take(a) === a2)
        #expect(pool.take(a) === a1)
        #expect(pool.take(a) == nil)
        #expect(pool.take(c) === c1)
        #expect(pool.take(Self.key("a.example.test", generation: 2)) == nil)
        #expect(pool.idleCount.current == 0)
    }

    @Test("every connection takes its turn, oldest first, across the ring's wrap and growth")
    func roundRobin() throws {
        let connections = try Connections()
        let made = try (0..<9).map { _ in try connections.make(a) }
        var idle = IdleConnections()
        // Three in, two out: the head moves, the next appends wrap round the four slots, then the ring grows to eight.
        for connection in made[0..<3] { idle.append(connection) }
        let first = idle.take(at: 0), second = idle.take(at: 0)
        #expect(first === made[0] && second === made[1])
        for connection in made[3...] { idle.append(connection) }
        #expect(idle.count == 7)
        idle.append(made[0])
        var order: [UpstreamConnection] = []
        while let next = idle.take(at: 0) { order.append(next) }
        #expect(order.map(ObjectIdentifier.init) == ([made[2]] + made[3...] + [made[0]]).map(ObjectIdentifier.init))
        #expect(idle.isEmpty && idle.count == 0)
    }

    @Test("fewer exchanges at once than connections pooled: all take turns for a period, then those not needed are set aside")
    func unneededSetAside() throws {
        let connections = try Connections()
        let made = try (0..<6).map { _ in try connections.make(a) }
        var idle = IdleConnections()
        for connection in made { idle.append(connection) }
        let start: Int64 = 10_000, end = start + IdleConnections.period
        // Two exchanges at a time, each pair back before the next: a rule that preferred
        // the recently parked would hand out the same two every time.
        var turns: [UpstreamConnection] = []
        for _ in 0..<3 {
            let taken = idle.take(at: start), second = idle.take(at: start)
            let one = try #require(taken), two = try #require(second)
            turns += [one, two]
            idle.append(one)
            idle.append(two)
        }
        #expect(turns.map(ObjectIdentifier.init) == made.map(ObjectIdentifier.init))
        // Nothing was set aside at the first take, though no period had been watched.
        #expect(idle.inTurn == 6)

        // The period over: four were in turn even at the busiest moment, and leave it from the front.
        let first = idle.take(at: end - 1), next = idle.take(at: end)
        #expect(first === made[0] && next === made[5])
        #expect(idle.inTurn == 0 && idle.count == 4)
        // More at once than in turn: those set aside, the one set aside last first.
        let third = idle.take(at: end), fourth = idle.take(at: end)
        #expect(third === made[4] && fourth === made[3])
        #expect(idle.connections.map(ObjectIdentifier.init) == [made[1], made[2]].map(ObjectIdentifier.init))
        for connection in [made[0], made[5], made[4], made[3]] { idle.append(connection) }
        // That period needed every one in turn: none is set aside at its end.
        let later = idle.take(at: end + IdleConnections.period)
        #expect(later === made[0] && idle.inTurn == 3)
        #expect(idle.connections.map(ObjectIdentifier.init) == [made[1], made[2], made[5], made[4], made[3]].map(ObjectIdentifier.init))
        // One set aside can still be retired, and the turn goes on.
        let removed = idle.remove(made[2])
        #expect(removed && idle.count == 4)
        let after = idle.take(at: end + IdleConnections.period)
        #expect(after === made[5])
    }

    @Test("a retired connection leaves its place wherever it is; the rest keep their order")
    func removeKeepsOrder() throws {
        let connections = try Connections()
        let made = try (0..<5).map { _ in try connections.make(a) }
        var idle = IdleConnections()
        for connection in made { idle.append(connection) }
        _ = idle.take(at: 0)  // the head moves off slot 0
        let removed = idle.remove(made[2]), removedTwice = idle.remove(made[2])
        let removedTaken = idle.remove(made[0])  // taken already
        #expect(removed && !removedTwice && !removedTaken)
        let renamed = idle.mapConnections { $0 }
        var merged = IdleConnections()
        merged.append(contentsOf: renamed)
        #expect(merged.connections.map(ObjectIdentifier.init) == [made[1], made[3], made[4]].map(ObjectIdentifier.init))
        let first = merged.take(at: 0), second = merged.take(at: 0), third = merged.take(at: 0), none = merged.take(at: 0)
        #expect(first === made[1] && second === made[3] && third === made[4] && none == nil)
    }

    @Test("idle_per_host holds for a key whether its list is at the front or not")
    func limitPerKey() throws {
        let connections = try Connections()
        let pool = UpstreamPool()
        let a1 = try connections.make(a), a2 = try connections.make(a), b1 = try connections.make(b), a3 = try connections.make(a)
        pool.put(a1, keepingAtMost: 2)
        pool.put(a2, keepingAtMost: 2)
        pool.put(b1, keepingAtMost: 2)  // a's list leaves the front
        pool.put(a3, keepingAtMost: 2)  // and comes back full
        #expect(!a3.isOpen)
        #expect(a1.isOpen && a2.isOpen)
        #expect(pool.idleCount.current == 3)
    }

    @Test("a connection that speaks or ends while idle is retired, at the front or not")
    func retiredWherever() throws {
        let connections = try Connections()
        let pool = UpstreamPool()
        let a1 = try connections.make(a), a2 = try connections.make(a), b1 = try connections.make(b)
        for connection in [a1, a2, b1] { pool.put(connection, keepingAtMost: 4) }
        pool.upstreamDidRead(a1)  // a's list is in the table
        pool.upstream(b1, didEnd: .endOfStream)  // b's is the front
        #expect(!a1.isOpen && !b1.isOpen)
        #expect(pool.idleCount.current == 1)
        #expect(pool.take(b) == nil)
        #expect(pool.take(a) === a2)
        #expect(pool.take(a) == nil)
    }

    /// A pool with one connection for `a`, filed in the table, and one for
    /// `b`, parked last and so at the front.
    private func parkedInTableAndFront(_ connections: Connections) throws
        -> (UpstreamPool, a: UpstreamConnection, b: UpstreamConnection) {
        let pool = UpstreamPool()
        let a1 = try connections.make(a), b1 = try connections.make(b)
        pool.put(a1, keepingAtMost: 4)
        pool.put(b1, keepingAtMost: 4)
        return (pool, a1, b1)
    }

    @Test("a reload keeps, under the new generation, only the keys it is told are alike, the front list's included")
    func renewSeesTheFront() throws {
        let connections = try Connections()
        let (pool, a1, _) = try parkedInTableAndFront(connections)
        pool.renew(to: 2, keepsConnection: { $0 == self.b }, keepsSession: { _ in false })
        #expect(!a1.isOpen)
        #expect(pool.take(b) == nil)
        let renewed = try #require(pool.take(Self.key("b.example.test", generation: 2)))
        #expect(renewed.key == Self.key("b.example.test", generation: 2))
        #expect(renewed.isOpen)
        #expect(pool.idleCount.current == 0)
    }

    @Test("shutdown closes every idle connection, the front list's too")
    func closeAllClosesTheFront() throws {
        let connections = try Connections()
        let (pool, a1, b1) = try parkedInTableAndFront(connections)
        pool.closeAll()
        #expect(!a1.isOpen && !b1.isOpen)
        #expect(pool.take(a) == nil && pool.take(b) == nil)
        #expect(pool.idleCount.current == 0)
    }
}

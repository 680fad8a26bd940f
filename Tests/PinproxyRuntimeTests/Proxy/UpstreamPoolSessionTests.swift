import COpenSSL
import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// The TLS sessions a loop keeps for resumption are bounded: a forward proxy
/// sent to ever new hosts keeps at most `sessionLimit`, and a key already kept
/// is replaced without evicting another.
@Suite("UpstreamPool: a bounded session cache")
struct UpstreamPoolSessionTests {
    private static func key(_ index: Int, generation: Int = 1) -> PoolKey {
        PoolKey(host: HostName("host\(index).example.test")!, port: 443, rule: "default", generation: generation)
    }

    private static func session() -> TLSSessionHandle {
        TLSSessionHandle(takingOwnership: SSL_SESSION_new()!)
    }

    @Test("ever new hosts keep no more than the limit, and the newest session stays")
    func manyHostsStayWithinTheLimit() {
        let pool = UpstreamPool(sessionLimit: 8)
        for index in 0..<100 {
            let stored = Self.session()
            pool.store(stored, for: Self.key(index))
            #expect(pool.session(for: Self.key(index)) === stored)
            #expect(pool.sessionCount == min(index + 1, 8))
        }
    }

    @Test("a full cache replaces a kept key's session without evicting another")
    func replacingAKeptKeyEvictsNothing() {
        let pool = UpstreamPool(sessionLimit: 4)
        let kept = (0..<4).map { index in
            let session = Self.session()
            pool.store(session, for: Self.key(index))
            return session
        }
        let newer = Self.session()
        pool.store(newer, for: Self.key(2))
        #expect(pool.sessionCount == 4)
        #expect(pool.session(for: Self.key(2)) === newer)
        for index in [0, 1, 3] { #expect(pool.session(for: Self.key(index)) === kept[index]) }
    }

    @Test("a reload keeps the older generation's sessions it is told are verified alike, under the new key, and frees the rest")
    func renewKeepsOnlyWhatIsAlike() {
        let pool = UpstreamPool(sessionLimit: 8)
        let alike = Self.session()
        pool.store(alike, for: Self.key(0, generation: 1))
        pool.store(Self.session(), for: Self.key(1, generation: 1))
        let current = Self.session()
        pool.store(current, for: Self.key(2, generation: 3))
        var asked: [PoolKey] = []
        pool.renew(to: 3, keepsConnection: { _ in true }, keepsSession: { key in
            asked.append(key)
            return key.host == Self.key(0).host
        })
        #expect(Set(asked) == [Self.key(0, generation: 1), Self.key(1, generation: 1)])
        #expect(pool.sessionCount == 2)
        #expect(pool.session(for: Self.key(0, generation: 3)) === alike)
        #expect(pool.session(for: Self.key(0, generation: 1)) == nil)
        #expect(pool.session(for: Self.key(1, generation: 1)) == nil)
        #expect(pool.session(for: Self.key(1, generation: 3)) == nil)
        #expect(pool.session(for: Self.key(2, generation: 3)) === current)
    }
}

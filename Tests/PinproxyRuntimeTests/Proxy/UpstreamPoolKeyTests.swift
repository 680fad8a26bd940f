import PinproxyCore
@testable import PinproxyRuntime
import Testing

/// The pool remembers the key it made last (a gateway asks for the same one
/// on every request). A pooled connection and a TLS session are reused only
/// under the key that verified them, so the remembered key must never stand
/// in for one that differs in any of its four parts.
@Suite("UpstreamPool: the key of an exchange")
struct UpstreamPoolKeyTests {
    private struct Parts: Equatable {
        var host: String
        var port: UInt16
        var rule: String
        var generation: Int
    }

    private static func key(_ pool: UpstreamPool, _ parts: Parts) -> PoolKey {
        pool.key(host: HostName(parts.host)!, port: parts.port, rule: parts.rule, generation: parts.generation)
    }

    private static func fresh(_ parts: Parts) -> PoolKey {
        PoolKey(host: HostName(parts.host)!, port: parts.port, rule: parts.rule, generation: parts.generation)
    }

    @Test("asked again and again, each part changed in turn, the key is always that of exactly the parts asked for")
    func eachPartChangesTheKey() {
        let pool = UpstreamPool()
        let base = Parts(host: "api.example.test", port: 443, rule: "api", generation: 1)
        let variants = [
            base,
            Parts(host: "other.example.test", port: 443, rule: "api", generation: 1),
            Parts(host: "api.example.test", port: 8443, rule: "api", generation: 1),
            Parts(host: "api.example.test", port: 443, rule: "default", generation: 1),
            Parts(host: "api.example.test", port: 443, rule: "api", generation: 2),
            Parts(host: "[::1]", port: 443, rule: "api", generation: 1),
        ]
        // Each variant right after the base and right after itself: a remembered
        // key is handed out only for equal parts, and a changed part is seen.
        for variant in variants {
            for parts in [base, variant, variant, base] {
                let key = Self.key(pool, parts)
                #expect(key == Self.fresh(parts))
                for other in variants where other != parts {
                    #expect(key != Self.fresh(other))
                }
            }
        }
    }
}

import Foundation
import PinproxyCore

/// Where every loop's counters are found (SPEC §6). The request path never
/// comes here: a listener takes its `ListenerCounters` when it starts and a
/// rule its `RuleCounters` when its generation is built; only those and a
/// scrape take the lock.
final class MetricsRegistry: Sendable {
    private struct RuleIdentity: Hashable {
        var rule: String
        /// The configured pins' digests (one to one with their `sha256/…` names).
        var pins: [[UInt8]]
        var learns: Bool

        /// The name alone (equality still compares the pins): names are
        /// unique within a generation, so at most a reload's old and new
        /// pins share a bucket. Hashing the digests too went byte by byte,
        /// 64 `Hasher` calls per rule, and was a tenth of loading 100,000 rules.
        func hash(into hasher: inout Hasher) {
            hasher.combine(rule)
            hasher.combine(learns)
        }
    }

    private struct State {
        var listeners: [String: ListenerCounters] = [:]
        var rules: [RuleIdentity: RuleCounters] = [:]
    }

    let loops: Int
    private let state = Locked(State())

    init(loops: Int) { self.loops = max(1, loops) }

    /// The counters of the listener bound to `name` (`ip:port`); the same
    /// object for the same name, so a listener kept across a reload keeps counting.
    func listener(named name: String, mode: ListenerConfiguration.Mode) -> ListenerCounters {
        let modeName = if case .gateway = mode { "gateway" } else { "forward" }
        return state.withLock { state in
            if let counters = state.listeners[name], counters.mode == modeName { return counters }
            let counters = ListenerCounters(name: name, mode: modeName, loops: loops)
            state.listeners[name] = counters
            return counters
        }
    }

    /// Room for `count` more rules, reserved before a generation asks for
    /// each of its rules' counters (one growth, not one per doubling).
    func reserveRules(_ count: Int) {
        state.withLock { state in state.rules.reserveCapacity(state.rules.count + count) }
    }

    /// The counters of `rule` with these pins (their digests, in the
    /// configuration's order); `learned`: a learning rule's source of the pins it learned.
    func rule(_ rule: String, pinDigests: [[UInt8]],
              learned: (@Sendable () -> RuleCounters.Pins?)? = nil) -> RuleCounters {
        let identity = RuleIdentity(rule: rule, pins: pinDigests, learns: learned != nil)
        return state.withLock { state in
            if let counters = state.rules[identity] { return counters }
            let counters = RuleCounters(rule: rule, pinDigests: pinDigests, loops: loops, learned: learned)
            state.rules[identity] = counters
            return counters
        }
    }

    /// Forgets the rules `configuration` (the generation just swapped in) no
    /// longer has, so that reloads that rename rules do not pile them up.
    /// Exchanges still under an older generation keep counting into theirs, unshown.
    func keepRules(of configuration: ActiveConfiguration) {
        let kept = Set(configuration.ruleCounters.map { ObjectIdentifier($0) })
        state.withLock { state in
            // A table of the kept rules' size, not `filter`: when every entry stays, `filter`
            // hands back the same storage, sized by `reserveRules` for two generations.
            var rules = [RuleIdentity: RuleCounters](minimumCapacity: kept.count)
            for (identity, counters) in state.rules where kept.contains(ObjectIdentifier(counters)) {
                rules[identity] = counters
            }
            state.rules = rules
        }
    }

    /// How many rules' counters the registry holds and how many its table has room for.
    var ruleTableSize: (count: Int, capacity: Int) {
        state.withLock { state in (state.rules.count, state.rules.capacity) }
    }

    /// The listeners and rules to show: those `configuration` has, in its
    /// order (a rule or listener a reload removed is not shown any more).
    func samples(for configuration: ActiveConfiguration, boundListeners: [String])
        -> (listeners: [MetricsSnapshot.Listener], rules: [MetricsSnapshot.Rule]) {
        let (listeners, rules) = state.withLock { state in
            (boundListeners.compactMap { state.listeners[$0] }, configuration.ruleCounters)
        }
        return (listeners.map(\.sample), rules.map(\.sample))
    }
}

import Foundation
import PinproxyCore
import Synchronization

/// The traffic of one `hosts` rule (or `default_policy`) (SPEC §6):
/// requests, upstream handshakes by outcome, violations by reason and action,
/// which pins the verified chains carried, and the last verified leaf. One
/// lane per event loop, each written only by its loop; a scrape sums them.
///
/// A rule keeps its counters across reloads while its key and pins stay the
/// same (`MetricsRegistry`): a reload that changes its pins starts new ones.
final class RuleCounters: Sendable {
    final class Lane: Sendable {
        let requests = Tally()
        let handshakesAccepted = Tally()
        let handshakesResumed = Tally()
        let handshakesBlocked = Tally()
        let handshakesReported = Tally()
        let handshakesFailed = Tally()
        /// By `ViolationReason` then action: index `reason * 2 + (reported ? 1 : 0)`.
        let violations: [Tally] = .tallies(ViolationReason.allCases.count * 2)
        /// Handshakes whose verified chain carried the pin at that index of `pins`.
        let pinSightings: [Tally]
        /// The last fully verified leaf: its notAfter and when it was seen
        /// (seconds since 1970; 0 = none yet), and whether the only pin it
        /// matched was its own key.
        let leafNotAfter = Reading()
        let leafSeenAt = Reading()
        let leafKeyOnly = Reading()

        init(pins: Int) { pinSightings = .tallies(pins) }
    }

    /// A loop's lane, made by that loop on its first use: most of a large
    /// configuration's rules never see traffic, and a lane is ~30 counters.
    /// The reference is kept as a raw pointer in an `Atomic` (a concrete,
    /// specialised type: `AtomicLazyReference`'s generic `load` looked up
    /// metadata on every request).
    private final class Slot: @unchecked Sendable {
        private let pointer = Atomic<UnsafeRawPointer?>(nil)

        /// The lane, made now if this is its first use.
        @inline(__always)
        func lane(pins: Int) -> Lane {
            if let raw = pointer.load(ordering: .acquiring) { return Unmanaged<Lane>.fromOpaque(raw).takeUnretainedValue() }
            // The +1 is the slot's own reference to its lane, released in `deinit`
            // (or at once here, when another thread stored a lane first).
            let fresh = Unmanaged.passRetained(Lane(pins: pins))
            let (stored, current) = pointer.compareExchange(expected: nil, desired: UnsafeRawPointer(fresh.toOpaque()),
                                                             ordering: .acquiringAndReleasing)
            if stored { return fresh.takeUnretainedValue() }
            fresh.release()
            return Unmanaged<Lane>.fromOpaque(current!).takeUnretainedValue()
        }

        var existing: Lane? {
            pointer.load(ordering: .acquiring).map { Unmanaged<Lane>.fromOpaque($0).takeUnretainedValue() }
        }

        deinit {
            if let raw = pointer.load(ordering: .relaxed) { Unmanaged<Lane>.fromOpaque(raw).release() }
        }
    }

    /// The pins sightings are counted for: the configured ones, or, for a
    /// rule with `"pins": "learn"`, those it has learned (none until then).
    struct Pins: Sendable {
        /// `sha256/…`, as the log's `known_pins` (first = primary).
        var names: [String]
        var digests: [[UInt8]]
        static let none = Pins(names: [], digests: [])
    }

    let rule: String
    /// The configured pins' digests; their `sha256/…` names are spelled only
    /// for a sample (a large configuration would otherwise keep two strings
    /// per rule that no scrape may ever ask for).
    private let configured: [[UInt8]]
    /// A learning rule's pins as learned so far; nil for every other rule.
    private let learned: (@Sendable () -> Pins?)?
    /// How many pins a lane counts sightings for.
    private let capacity: Int
    private let slots: [Slot]

    /// `learned`: for a learning rule, what it has learned (at most
    /// `learnedCapacity` pins: the leaf's and the issuer's key).
    init(rule: String, pinDigests: [[UInt8]], loops: Int,
         learned: (@Sendable () -> Pins?)? = nil, learnedCapacity: Int = 2) {
        self.rule = rule
        configured = pinDigests
        self.learned = learned
        capacity = learned == nil ? pinDigests.count : learnedCapacity
        slots = (0..<loops).map { _ in Slot() }
    }

    /// The digests of the pins in force now (what a verified chain is compared with).
    private var currentDigests: [[UInt8]] {
        guard let learned else { return configured }
        return learned()?.digests ?? []
    }

    /// The pins in force now, named.
    private var current: Pins {
        guard let learned else {
            return Pins(names: configured.compactMap { SPKIPin(digest: $0)?.description }, digests: configured)
        }
        return learned() ?? .none
    }

    /// Loop `index`'s lane; only that loop writes it.
    @inline(__always)
    func lane(_ index: Int) -> Lane {
        slots[index].lane(pins: capacity)
    }

    /// The lanes made so far.
    private var lanes: [Lane] { slots.compactMap(\.existing) }

    /// Whether any loop counted anything for this rule (made a lane). A rule
    /// without one has seen no leaf, so it has no drift finding: 100,000 rules
    /// need not be sampled to learn that.
    var hasLanes: Bool { slots.contains { $0.existing != nil } }

    /// A full handshake the policy let through (`verdict` nil means the
    /// check did not run, as on a resumed session): counts it and, from its
    /// verified chain, the pins it carried and its leaf.
    func handshakeAccepted(on loop: Int, verdict: TrustVerdict?, resumed: Bool, now: Date) {
        let lane = lane(loop)
        lane.handshakesAccepted.add()
        if resumed { lane.handshakesResumed.add() }
        guard let chain = verdict.map({ $0.chain.verified ?? $0.chain.signingPath }), let leaf = chain.first else { return }
        var leafMatched = false, issuerMatched = false
        let digests = currentDigests
        for (position, certificate) in chain.enumerated() {
            guard let index = digests.firstIndex(of: certificate.spkiSHA256), index < lane.pinSightings.count else { continue }
            lane.pinSightings[index].add()
            if position == 0 { leafMatched = true } else { issuerMatched = true }
        }
        lane.leafNotAfter.set(Int64(leaf.notAfter.timeIntervalSince1970))
        lane.leafSeenAt.set(Int64(now.timeIntervalSince1970))
        lane.leafKeyOnly.set(leafMatched && !issuerMatched ? 1 : 0)
    }

    @inline(__always)
    func violation(on loop: Int, reason: ViolationReason, reported: Bool) {
        guard let index = ViolationReason.allCases.firstIndex(of: reason) else { return }
        lane(loop).violations[index * 2 + (reported ? 1 : 0)].add()
    }

    var sample: MetricsSnapshot.Rule {
        let lanes = self.lanes
        func sum(_ tally: (Lane) -> Tally) -> UInt64 { lanes.reduce(0) { $0 &+ tally($1).count } }
        var violations: [MetricsSnapshot.ViolationCount] = []
        for (index, reason) in ViolationReason.allCases.enumerated() {
            for (offset, action) in [ViolationEvent.Action.blocked, .reported].enumerated() {
                let count = sum { $0.violations[index * 2 + offset] }
                if count > 0 { violations.append(.init(reason: reason, action: action, count: count)) }
            }
        }
        // The lane that saw a leaf last speaks for the rule.
        let latest = lanes.max { $0.leafSeenAt.current < $1.leafSeenAt.current }
        let leaf = latest.flatMap { lane -> MetricsSnapshot.Leaf? in
            guard lane.leafSeenAt.current > 0 else { return nil }
            return MetricsSnapshot.Leaf(notAfter: Date(timeIntervalSince1970: TimeInterval(lane.leafNotAfter.current)),
                                        seenAt: Date(timeIntervalSince1970: TimeInterval(lane.leafSeenAt.current)),
                                        onlyLeafKeyMatched: lane.leafKeyOnly.current == 1)
        }
        return MetricsSnapshot.Rule(
            rule: rule, requests: sum(\.requests),
            handshakes: .init(accepted: sum(\.handshakesAccepted), resumed: sum(\.handshakesResumed),
                              blocked: sum(\.handshakesBlocked), reported: sum(\.handshakesReported),
                              failed: sum(\.handshakesFailed)),
            violations: violations,
            pins: current.names.enumerated().map { index, pin in
                .init(pin: pin, sightings: index < capacity ? sum { $0.pinSightings[index] } : 0)
            },
            leaf: leaf)
    }
}

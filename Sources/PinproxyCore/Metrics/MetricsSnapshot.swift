import Foundation

/// What the admin listener shows at one instant (SPEC §6), summed over the
/// event loops: the input of `/metrics` (`PrometheusExposition`) and
/// `/status` (`StatusDocument`).
public struct MetricsSnapshot: Sendable, Hashable {
    public struct Listener: Sendable, Hashable {
        /// The bound address, `ip:port`.
        public var name: String
        /// `forward` or `gateway`.
        public var mode: String
        public var accepted: UInt64
        /// Final statuses sent, by class: index 0 is 1xx … 4 is 5xx.
        public var responses: [UInt64]
        public var intercepted: UInt64
        public var tunnelled: UInt64
        public var refusedConnects: UInt64
        /// Requests `default_policy: "deny"` refused.
        public var denied: UInt64

        public init(name: String, mode: String, accepted: UInt64, responses: [UInt64], intercepted: UInt64,
                    tunnelled: UInt64, refusedConnects: UInt64, denied: UInt64) {
            self.name = name
            self.mode = mode
            self.accepted = accepted
            self.responses = responses
            self.intercepted = intercepted
            self.tunnelled = tunnelled
            self.refusedConnects = refusedConnects
            self.denied = denied
        }
    }

    /// Upstream TLS handshakes of a rule, by outcome.
    public struct Handshakes: Sendable, Hashable {
        /// The policy passed (`resumed` of them resumed a session, no evaluation needed).
        public var accepted: UInt64
        public var resumed: UInt64
        public var blocked: UInt64
        /// The policy failed under `enforce: false`; relayed anyway.
        public var reported: UInt64
        /// No verdict: DNS, TCP or TLS failed, or timed out.
        public var failed: UInt64

        public init(accepted: UInt64 = 0, resumed: UInt64 = 0, blocked: UInt64 = 0, reported: UInt64 = 0, failed: UInt64 = 0) {
            self.accepted = accepted
            self.resumed = resumed
            self.blocked = blocked
            self.reported = reported
            self.failed = failed
        }
    }

    public struct ViolationCount: Sendable, Hashable {
        public var reason: ViolationReason
        public var action: ViolationEvent.Action
        public var count: UInt64
        public init(reason: ViolationReason, action: ViolationEvent.Action, count: UInt64) {
            self.reason = reason
            self.action = action
            self.count = count
        }
    }

    public struct PinSightings: Sendable, Hashable {
        /// `sha256/…`.
        public var pin: String
        /// Verified handshakes whose chain carried it.
        public var sightings: UInt64
        public init(pin: String, sightings: UInt64) {
            self.pin = pin
            self.sightings = sightings
        }
    }

    /// The leaf of a rule's last fully verified handshake.
    public struct Leaf: Sendable, Hashable {
        public var notAfter: Date
        public var seenAt: Date
        /// The only pin of the rule it matched was its own key: a renewal with a new key would be blocked.
        public var onlyLeafKeyMatched: Bool
        public init(notAfter: Date, seenAt: Date, onlyLeafKeyMatched: Bool) {
            self.notAfter = notAfter
            self.seenAt = seenAt
            self.onlyLeafKeyMatched = onlyLeafKeyMatched
        }
    }

    public struct Rule: Sendable, Hashable {
        /// The `hosts` key, or `default_policy`.
        public var rule: String
        /// Requests (and CONNECTs) routed under the rule.
        public var requests: UInt64
        public var handshakes: Handshakes
        /// Only the non-zero ones.
        public var violations: [ViolationCount]
        /// Every pin of the rule, in its order (the first is the primary).
        public var pins: [PinSightings]
        public var leaf: Leaf?

        public init(rule: String, requests: UInt64, handshakes: Handshakes, violations: [ViolationCount],
                    pins: [PinSightings], leaf: Leaf?) {
            self.rule = rule
            self.requests = requests
            self.handshakes = handshakes
            self.violations = violations
            self.pins = pins
            self.leaf = leaf
        }

        public func violations(_ action: ViolationEvent.Action) -> UInt64 {
            violations.filter { $0.action == action }.reduce(0) { $0 + $1.count }
        }
    }

    /// The custom policy's commands, for the whole daemon (SPEC §2.1).
    public struct CustomChecks: Sendable, Hashable {
        /// Commands started.
        public var started: UInt64 = 0
        /// Handshakes that joined a run already asking about their chain.
        public var shared: UInt64 = 0
        /// Running now, and waiting for `limits.custom_checks`.
        public var running: Int = 0
        public var waiting: Int = 0
        public init() {}
    }

    public var version: String
    public var generation: Int
    public var startedAt: Date
    public var activeConnections: Int
    public var listeners: [Listener]
    public var rules: [Rule]
    /// Idle verified upstream connections in the pools of every loop.
    public var idleUpstreamConnections: Int
    public var violationLogQueued: Int
    public var violationLogWriteErrors: UInt64
    public var violationLogDropped: Int
    /// nil without `interception`.
    public var interceptionCAExpiry: Date?
    public var customChecks = CustomChecks()

    public init(version: String, generation: Int, startedAt: Date, activeConnections: Int, listeners: [Listener],
                rules: [Rule], idleUpstreamConnections: Int, violationLogQueued: Int, violationLogWriteErrors: UInt64,
                violationLogDropped: Int, interceptionCAExpiry: Date?) {
        self.version = version
        self.generation = generation
        self.startedAt = startedAt
        self.activeConnections = activeConnections
        self.listeners = listeners
        self.rules = rules
        self.idleUpstreamConnections = idleUpstreamConnections
        self.violationLogQueued = violationLogQueued
        self.violationLogWriteErrors = violationLogWriteErrors
        self.violationLogDropped = violationLogDropped
        self.interceptionCAExpiry = interceptionCAExpiry
    }
}

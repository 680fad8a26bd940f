/// What one configuration generation says about where requests may go: the
/// host rules and `default_policy`, and pinproxy's own listeners. Built once
/// per generation and shared by reference, so a session takes it with each
/// request head for one retain.
public final class RequestRules: Sendable {
    public let policies: PolicyTable
    public let listeners: [ListenerConfiguration]
    /// `connect_ports` (SPEC §3.1).
    public let connectPorts: Set<UInt16>
    /// The names the loaded interception CA may issue for; nil when
    /// `interception` is not configured.
    public let interception: InterceptionScope?
    /// `ruleName(for:)` of each gateway listener's fixed upstream, looked up
    /// once per generation: every request of a gateway asks it for the same
    /// host, and a table lookup copies the matched `HostRule` (some 1,400
    /// instructions per request).
    private let gatewayRuleNames: [(host: HostName, rule: String?)]

    /// The rule keys of the gateways' upstreams, as `ruleName(for:)` returns
    /// them (the same strings, so a runtime table keyed by them compares
    /// by storage first).
    public var gatewayRuleKeys: [String] { gatewayRuleNames.compactMap(\.rule) }

    public init(policies: PolicyTable, listeners: [ListenerConfiguration], connectPorts: Set<UInt16> = [443],
                interception: InterceptionScope? = nil) {
        self.policies = policies
        self.listeners = listeners
        self.connectPorts = connectPorts
        self.interception = interception
        gatewayRuleNames = listeners.compactMap { listener in
            guard case let .gateway(upstream) = listener.mode else { return nil }
            return (upstream.host, Self.ruleName(policies.lookup(upstream.host)))
        }
    }

    /// The rules of `configuration`, with the scope of the CA it loaded.
    public convenience init(_ configuration: Configuration, interception: InterceptionScope? = nil) {
        self.init(policies: configuration.policies, listeners: configuration.listeners,
                  connectPorts: configuration.connectPorts, interception: interception)
    }

    /// What a CONNECT to `target` becomes (SPEC §3.1).
    public func connectDisposition(for target: Endpoint) -> ConnectDisposition {
        guard connectPorts.contains(target.port) else { return .refuse(.connectPortDenied(target)) }
        switch policies.lookup(target.host) {
        case let .rule(rule):
            // `disable`: interception would remove the client's own check and add none.
            if rule.policy.kind == .disable { return .tunnel(rule: rule.key) }
            guard let interception else { return .refuse(.interceptionNotConfigured(target.host)) }
            guard interception.covers(target.host) else { return .refuse(.interceptionNotCovered(target.host)) }
            return .intercept(rule: rule.key)
        case let .defaultPolicy(policy):
            // Only "default" leaves the check to the client; a stricter policy cannot be applied blind.
            guard policy == .standard else { return .refuse(.tunnelCannotEnforce(target.host)) }
            return .tunnel(rule: ViolationEvent.defaultPolicyRule)
        case .deny:
            return .refuse(.requestDenied(target.host))
        }
    }

    /// The rule that governs a request to `host`: its `hosts` key, or
    /// `ViolationEvent.defaultPolicyRule`; nil when `default_policy` denies it.
    public func ruleName(for host: HostName) -> String? {
        for entry in gatewayRuleNames where entry.host == host { return entry.rule }
        return Self.ruleName(policies.lookup(host))
    }

    private static func ruleName(_ lookup: PolicyTable.Lookup) -> String? {
        switch lookup {
        case let .rule(matched): matched.key
        case .defaultPolicy: ViolationEvent.defaultPolicyRule
        case .deny: nil
        }
    }

    /// True when `endpoint` names one of pinproxy's own listeners: a request
    /// there would come straight back in (SPEC §3: 508). Loopback names
    /// (`localhost`, `127.0.0.1`, `::1`) count as one another.
    public func isOwnListener(_ endpoint: Endpoint) -> Bool {
        func isLoopbackName(_ host: HostName) -> Bool {
            host.value == "localhost" || host.value == "127.0.0.1" || host.value == "::1"
        }
        for listener in listeners where listener.address.port == endpoint.port {
            if listener.address.host == endpoint.host { return true }
            if isLoopbackName(endpoint.host) && isLoopbackName(listener.address.host) { return true }
        }
        return false
    }
}

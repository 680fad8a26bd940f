/// What one configuration generation says about where requests may go: the
/// host rules and `default_policy`, and pinproxy's own listeners. Built once
/// per generation and shared by reference, so a session takes it with each
/// request head for one retain.
public final class RequestRules: Sendable {
    public let policies: PolicyTable
    public let listeners: [ListenerConfiguration]

    public init(policies: PolicyTable, listeners: [ListenerConfiguration]) {
        self.policies = policies
        self.listeners = listeners
    }

    /// The rules of `configuration`.
    public convenience init(_ configuration: Configuration) {
        self.init(policies: configuration.policies, listeners: configuration.listeners)
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

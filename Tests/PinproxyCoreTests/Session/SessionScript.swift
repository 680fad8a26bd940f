@testable import PinproxyCore

/// Drives a `SessionMachine` with text heads and returns the actions of each
/// event, so tests read as whole event → action sequences.
struct SessionScript {
    static let api = Endpoint(host: HostName("api.example.com")!, port: 443)

    var machine: SessionMachine

    init(mode: ListenerConfiguration.Mode = .forward) {
        machine = SessionMachine(mode: mode)
    }

    /// Rules with one listener on 127.0.0.1:8080 and `policies` (default: allow every host).
    static func rules(_ policies: PolicyTable = PolicyTable()) -> RequestRules {
        RequestRules(policies: policies, listeners: [
            ListenerConfiguration(address: Endpoint(host: HostName("127.0.0.1")!, port: 8080), mode: .forward),
        ])
    }

    mutating func feed(_ event: SessionEvent) -> [SessionAction] {
        var actions: [SessionAction] = []
        machine.handle(event, into: &actions)
        return actions
    }

    /// A request head parsed from `text`, with `buffered` client bytes (default: the head's own).
    mutating func head(_ text: String, buffered: Int? = nil, rules: RequestRules, draining: Bool = false) -> [SessionAction] {
        let result = Array(text.utf8).withUnsafeBytes { RequestHeadParser.parse($0, limits: HeadLimits()) }
        return feed(.requestHead(result, buffered: buffered ?? text.utf8.count, rules: rules, draining: draining))
    }

    /// The answer `actions` end with, when they end with an answer and close.
    static func answer(in actions: [SessionAction]) -> ProxyAnswer? {
        guard case let .answerAndClose(reason) = actions.last else { return nil }
        return reason.answer
    }

    /// Whether `actions` start an exchange (anything went towards an upstream).
    static func startsExchange(_ actions: [SessionAction]) -> Bool {
        actions.contains { if case .startExchange = $0 { true } else { false } }
    }

    /// A response head parsed from `text` for a request of `method`.
    mutating func response(_ text: String, method: String = "GET") -> [SessionAction] {
        let result = Array(text.utf8).withUnsafeBytes { ResponseHeadParser.parse($0, requestMethod: method, limits: HeadLimits()) }
        return feed(.responseHead(result))
    }
}

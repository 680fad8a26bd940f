import Foundation

/// One policy failure, as written to the violation log (SPEC §4): the
/// evidence an operator needs to tell an attack from a forgotten backup pin.
///
/// Never logged: the request's query string or fragment (they may hold
/// secrets), headers, bodies. `requestTarget` is cut at the first `?` or `#`
/// when the event is made, whenever the property is set, and again when it is
/// serialised, so no single forgotten step can leak a query.
public struct ViolationEvent: Sendable, Hashable {
    /// `action`: what pinproxy did about the violation.
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// `enforce: true`: the handshake was aborted and the client got 502.
        case blocked
        /// `enforce: false`: the violation was logged and the request relayed.
        case reported

        /// The action a decision implies; nil for `.allow`, which logs nothing.
        public init?(_ decision: TrustDecision) {
            switch decision {
            case .allow: return nil
            case .allowAndReport: self = .reported
            case .block: self = .blocked
            }
        }
    }

    /// When the violation happened (the injected `now` of the evaluation).
    public var time: Date
    public var action: Action
    public var reason: ViolationReason
    /// The upstream host as requested (normalised), and its port.
    public var host: String
    public var port: UInt16
    /// The address actually connected to, `ip:port` (after `resolve` overrides).
    public var peerAddress: String
    /// The matched `hosts` key, or `"default_policy"`.
    public var rule: String
    public var policy: PolicyKind
    public var enforce: Bool
    public var includeSubdomains: Bool
    /// The configured SPKI pins, `sha256/<base64>`.
    public var knownPins: [String]
    /// The certificates as the server sent them, leaf first.
    public var servedChain: [CertificateFacts]
    public var clientAddress: String
    /// The listener's address, `ip:port`.
    public var listener: String
    /// How the client reached the request: plain HTTP, or inside an intercepted CONNECT.
    public var clientTransport: ClientTransport
    public var configGeneration: Int
    public var requestMethod: String
    /// The request's path, without query string or fragment.
    public var requestTarget: String {
        didSet { requestTarget = Self.withoutQuery(requestTarget) }
    }
    /// Evidence, from `TrustEvaluation.failed(reason:detail:)`.
    public var detail: String

    public init(time: Date, action: Action, reason: ViolationReason, host: String, port: UInt16,
                peerAddress: String, rule: String, policy: PolicyKind, enforce: Bool, includeSubdomains: Bool,
                knownPins: [String], servedChain: [CertificateFacts], clientAddress: String, listener: String,
                configGeneration: Int, requestMethod: String, requestTarget: String, detail: String,
                clientTransport: ClientTransport = .http) {
        self.time = time
        self.action = action
        self.reason = reason
        self.host = host
        self.port = port
        self.peerAddress = peerAddress
        self.rule = rule
        self.policy = policy
        self.enforce = enforce
        self.includeSubdomains = includeSubdomains
        self.knownPins = knownPins
        self.servedChain = servedChain
        self.clientAddress = clientAddress
        self.listener = listener
        self.clientTransport = clientTransport
        self.configGeneration = configGeneration
        self.requestMethod = requestMethod
        self.requestTarget = Self.withoutQuery(requestTarget)
        self.detail = detail
    }

    /// `client_transport` (SPEC §4).
    public enum ClientTransport: String, Sendable, Hashable {
        /// A plain HTTP request to the proxy.
        case http
        /// A CONNECT (blocked before the `200`), or a request inside an intercepted one (SPEC §3.1).
        case connect
    }

    /// The `rule` of events from hosts that matched no `hosts` key.
    public static let defaultPolicyRule = "default_policy"

    /// `target` up to (not including) the first `?` or `#` (RFC 3986 §3.4, §3.5).
    public static func withoutQuery(_ target: String) -> String {
        guard let cut = target.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else {
            return target
        }
        return String(target[..<cut])
    }
}

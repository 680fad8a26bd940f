import Foundation
import PinproxyCore

/// What `pinproxy probe` found: the rule and policy that govern a host, the
/// verdict the daemon would reach, and the evidence (SPEC §1).
public struct ProbeReport: Sendable {
    /// The outcome, and the exit code it implies (SPEC §1: 0 accepted, 1 rejected, 3 runtime failure).
    public enum Verdict: Sendable, Hashable {
        case accepted
        /// The policy failed but `enforce: false` lets the request through (logged as `reported`).
        case acceptedReportOnly
        /// The policy blocked the server inside the handshake.
        case rejected
        /// `default_policy: "deny"` covers the host: the daemon answers 403 without connecting.
        case denied
        /// DNS, TCP or TLS failed before a verdict (the daemon's 502/504).
        case connectionFailed
        /// A file the configuration names could not be loaded, so the daemon would not start.
        case configurationUnusable

        /// The words `probe` prints.
        public var label: String {
            switch self {
            case .accepted: "ACCEPTED"
            case .acceptedReportOnly: "ACCEPTED (report-only)"
            case .rejected: "REJECTED"
            case .denied: "REJECTED (denied by default_policy)"
            case .connectionFailed: "NO VERDICT (connection failed)"
            case .configurationUnusable: "NO VERDICT (configuration unusable)"
            }
        }

        public var exitCode: Int32 {
            switch self {
            case .accepted, .acceptedReportOnly: 0
            case .rejected, .denied, .configurationUnusable: 1
            case .connectionFailed: 3
            }
        }
    }

    public var host: String
    public var port: UInt16
    /// The matched `hosts` key, `default_policy`, or nil before a lookup was possible.
    public var rule: String?
    public var policy: TrustPolicy?
    /// The configured pins as `sha256/…`, files' keys included.
    public var knownPins: [String] = []
    public var verdict: Verdict
    /// The first failing check (SPEC §2.3); nil when accepted or no verdict.
    public var reason: ViolationReason?
    /// The evidence sentence, or what failed when there is no verdict.
    public var detail: String = ""
    /// The address actually connected to (after `resolve` overrides).
    public var peerAddress: String?
    /// Whether the policy evaluated the chain (false for `disable`, and
    /// whenever no handshake reached the verify step).
    public var evaluated = false
    /// The certificates the server sent, leaf first.
    public var servedChain: [CertificateFacts] = []
    /// The chain OpenSSL built and verified; nil when path validation failed.
    public var verifiedChain: [CertificateFacts]?
}

/// Evaluates a host exactly as the daemon would (SPEC §1 `probe`): the same
/// `ActiveConfiguration` (every policy file loaded), the same
/// `PolicyTable` lookup, the same `UpstreamConnector` on an `EventLoop` with the
/// daemon's `DNSResolver` (`resolve` overrides and `PINPROXY_RESOLV_CONF`
/// honoured), and the same verify callback deciding inside the handshake.
public enum PolicyProbe {
    /// Connects once, blocking the calling thread on a private loop until the
    /// connector reports (bounded by the configured connect and handshake
    /// timeouts, plus the resolver's own), and reports what happened.
    public static func run(configuration: Configuration, host: String, port: UInt16,
                           environment: [String: String]) -> ProbeReport {
        var report = ProbeReport(host: host, port: port, verdict: .connectionFailed)
        guard let name = HostName(host) else {
            report.detail = "\(host) is not a host name or IP literal"
            return report
        }
        switch configuration.policies.lookup(name) {
        case let .rule(rule): report.rule = rule.key; report.policy = rule.policy
        case let .defaultPolicy(policy): report.rule = ViolationEvent.defaultPolicyRule; report.policy = policy
        case .deny:
            report.rule = ViolationEvent.defaultPolicyRule
            report.verdict = .denied
            report.detail = "no hosts key matches \(name) and default_policy is \"deny\""
            return report
        }
        let active: ActiveConfiguration
        do {
            active = try ActiveConfiguration(configuration: configuration, generation: 1)
        } catch {
            report.verdict = .configurationUnusable
            report.detail = "\(error)"
            return report
        }
        guard let prepared = active.policy(for: name) else {
            report.verdict = .denied
            return report
        }
        report.knownPins = prepared.knownPins
        let loop: EventLoop
        let resolver: DNSResolver
        do {
            loop = try EventLoop()
            resolver = try DNSResolver(loop: loop, resolvConf: environment["PINPROXY_RESOLV_CONF"])
        } catch {
            report.detail = "cannot start an event loop: \(error)"
            return report
        }
        let pool = UpstreamPool()
        let target = Endpoint(host: name, port: port)
        var outcome: Result<UpstreamConnector.Success, UpstreamFailure>?
        // The pool is unowned by the connector, and the resolver and loop must
        // outlive every event: all three live until the connector is gone.
        withExtendedLifetime((loop, resolver, pool)) {
            let connector = UpstreamConnector(
                loop: loop, resolver: resolver, pool: pool, target: target,
                connectTo: configuration.resolveOverrides[target],
                key: PoolKey(host: name, port: port, rule: prepared.ruleName, generation: active.generation),
                policy: prepared, timeouts: configuration.timeouts) { result in
                    outcome = result
                    loop.stop()
                }
            // A backstop only: the connector's own timers always report first.
            let budget = configuration.timeouts.connect + configuration.timeouts.handshake + .seconds(15)
            let backstop = Timer(loop: loop) { loop.stop() }
            backstop.schedule(after: budget)
            loop.run()
            backstop.cancel()
            if case let .success(success) = outcome { success.connection.close() }
            connector.cancel()
        }
        record(outcome, policy: prepared, into: &report)
        return report
    }

    /// Builds the configuration the way the daemon does at start: the trust
    /// store and every pin, certificate, anchor and client key file is read
    /// and parsed by OpenSSL, every `SSL_CTX` is made. `pinproxy check` calls
    /// it so an unreadable or garbage PEM is found before a start or reload.
    /// The error names each failing rule as a JSON path, and its file.
    public static func loadPolicyFiles(of configuration: Configuration) throws {
        _ = try ActiveConfiguration(configuration: configuration, generation: 1)
    }

    private static func record(_ outcome: Result<UpstreamConnector.Success, UpstreamFailure>?,
                               policy: PreparedPolicy, into report: inout ProbeReport) {
        switch outcome {
        case nil:
            report.detail = "no answer within the configured connect and handshake timeouts"
        case let .success(success):
            report.peerAddress = success.connection.peer.description
            if let verdict = success.reported {
                report.verdict = .acceptedReportOnly
                report.reason = verdict.decision.reason
                report.detail = verdict.decision.detail ?? ""
                report.evaluated = true
                report.servedChain = verdict.chain.served
                report.verifiedChain = verdict.chain.verified
            } else {
                report.verdict = .accepted
                if let chain = success.connection.handshake.peerChain {
                    report.evaluated = true
                    report.servedChain = chain.served
                    report.verifiedChain = chain.verified
                    report.detail = "every check of the \(policy.policy.kind.rawValue) policy passed"
                } else {
                    report.detail = policy.policy.kind == .disable
                        ? "policy disable: the chain was not evaluated"
                        : "the chain was not evaluated (resumed session)"
                }
            }
        case let .failure(.blocked(verdict, peer)):
            report.verdict = .rejected
            report.peerAddress = peer.description
            report.reason = verdict.decision.reason
            report.detail = verdict.decision.detail ?? ""
            report.evaluated = true
            report.servedChain = verdict.chain.served
            report.verifiedChain = verdict.chain.verified
        case let .failure(.dns(text)):
            report.detail = "DNS: \(text)"
        case let .failure(.refused(text)):
            report.detail = "connection refused: \(text)"
        case let .failure(.timedOut(text)):
            report.detail = "timeout: \(text)"
        case let .failure(.tls(text)):
            report.detail = "TLS: \(text)"
        }
    }
}

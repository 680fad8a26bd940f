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
        /// `--chain FILE` could not be read as certificates.
        case chainUnreadable

        /// The words `probe` prints.
        public var label: String {
            switch self {
            case .accepted: "ACCEPTED"
            case .acceptedReportOnly: "ACCEPTED (report-only)"
            case .rejected: "REJECTED"
            case .denied: "REJECTED (denied by default_policy)"
            case .connectionFailed: "NO VERDICT (connection failed)"
            case .configurationUnusable: "NO VERDICT (configuration unusable)"
            case .chainUnreadable: "NO VERDICT (chain file unreadable)"
            }
        }

        public var exitCode: Int32 {
            switch self {
            case .accepted, .acceptedReportOnly: 0
            case .rejected, .denied, .configurationUnusable: 1
            case .connectionFailed, .chainUnreadable: 3
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
    /// `--chain`: evaluated offline at this time, no connection made.
    public var offlineTime: Date?
    /// Offline under `ocsp_stapling` other than `"off"`: what was not checked.
    public var notEvaluated: String?
    /// `policy: "custom"`: what its command answered, when it was asked.
    public var customVerdict: CustomVerdict?
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
        guard let (name, active, prepared) = prepare(configuration, host: host, into: &report) else { return report }
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

    /// SPEC §1 `probe --chain FILE [--at TIME]`: the same lookup and the same
    /// prepared policy as a live probe, and the handshake's own verification
    /// (`OfflineHandshake`) over the chain in `chainFile` (PEM, leaf first) at
    /// `time` (nil = now). No connection is made.
    public static func run(configuration: Configuration, host: String, port: UInt16,
                           chainFile: String, at time: Date?) -> ProbeReport {
        var report = ProbeReport(host: host, port: port, verdict: .connectionFailed)
        report.offlineTime = time ?? Date()
        guard let (name, _, prepared) = prepare(configuration, host: host, into: &report) else { return report }
        let chain: [X509Certificate]
        do {
            chain = try X509Certificate.load(contentsOf: chainFile)
        } catch {
            report.verdict = .chainUnreadable
            report.detail = "\(error)"
            return report
        }
        let verdict: TrustVerdict
        do {
            verdict = try OfflineHandshake.evaluate(chain, host: name, port: port, policy: prepared, at: report.offlineTime)
        } catch {
            report.verdict = .chainUnreadable
            report.detail = "\(error)"
            return report
        }
        record(verdict, policy: prepared, into: &report)
        if report.evaluated, prepared.policy.ocspStapling != .off {
            report.notEvaluated = "the OCSP staple (ocsp_stapling \"\(prepared.policy.ocspStapling.rawValue)\"): only a live handshake carries one"
        }
        return report
    }

    /// The rule, policy and prepared policy for `host` (SPEC §2.2), recorded
    /// in `report`; nil when there is nothing to evaluate (then `report` says why).
    private static func prepare(_ configuration: Configuration, host: String,
                                into report: inout ProbeReport) -> (HostName, ActiveConfiguration, PreparedPolicy)? {
        guard let name = HostName(host) else {
            report.detail = "\(host) is not a host name or IP literal"
            return nil
        }
        switch configuration.policies.lookup(name) {
        case let .rule(rule): report.rule = rule.key; report.policy = rule.policy
        case let .defaultPolicy(policy): report.rule = ViolationEvent.defaultPolicyRule; report.policy = policy
        case .deny:
            report.rule = ViolationEvent.defaultPolicyRule
            report.verdict = .denied
            report.detail = "no hosts key matches \(name) and default_policy is \"deny\""
            return nil
        }
        let active: ActiveConfiguration
        do {
            // The interception CA serves clients, not upstreams: a probe does not need it.
            // It reads what learning rules learned, and learns nothing itself.
            active = try ActiveConfiguration(configuration: configuration, generation: 1, loadsInterception: false,
                                             recordsLearnedPins: false)
        } catch {
            report.verdict = .configurationUnusable
            report.detail = "\(error)"
            return nil
        }
        guard let prepared = active.policy(for: name) else {
            report.verdict = .denied
            return nil
        }
        report.knownPins = prepared.knownPins
        return (name, active, prepared)
    }

    /// Builds the configuration the way the daemon does at start: the trust
    /// store and every pin, certificate, anchor and client key file is read
    /// and parsed by OpenSSL, every `SSL_CTX` is made, the interception CA
    /// is loaded with its modes checked. `pinproxy check` calls
    /// it so an unreadable or garbage PEM is found before a start or reload.
    /// The error names each failing rule as a JSON path, and its file.
    /// Returns the findings that are warnings, not errors (a stale CRL).
    @discardableResult
    public static func loadPolicyFiles(of configuration: Configuration, configPath: String? = nil,
                                       at now: Date = Date()) throws -> [String] {
        try ActiveConfiguration(configuration: configuration, generation: 1, configPath: configPath, now: now).warnings(at: now)
    }

    /// What `loadPolicyFiles` does, returning the warnings about the policies'
    /// files and the interception CA it loaded (nil without `interception`),
    /// which `check` reports on itself (names, expiry, hosts not covered).
    public static func load(_ configuration: Configuration, configPath: String?,
                            at now: Date = Date()) throws -> (fileWarnings: [String], interception: InterceptionAuthority?) {
        let active = try ActiveConfiguration(configuration: configuration, generation: 1, configPath: configPath, now: now)
        return (active.fileWarnings(at: now), active.interception)
    }

    private static func record(_ outcome: Result<UpstreamConnector.Success, UpstreamFailure>?,
                               policy: PreparedPolicy, into report: inout ProbeReport) {
        switch outcome {
        case nil:
            report.detail = "no answer within the configured connect and handshake timeouts"
        case let .success(success):
            report.peerAddress = success.connection.peer.description
            record(success.connection.handshake.verdict, policy: policy, into: &report)
        case let .failure(.blocked(verdict, peer)):
            report.peerAddress = peer.description
            record(verdict, policy: policy, into: &report)
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

    /// What the handshake's one verdict says, live or offline; nil when the
    /// handshake verified nothing (a resumed session).
    private static func record(_ verdict: TrustVerdict?, policy: PreparedPolicy, into report: inout ProbeReport) {
        guard let verdict else {
            report.verdict = .accepted
            report.detail = "the chain was not evaluated (resumed session)"
            return
        }
        report.evaluated = policy.policy.kind != .disable
        report.servedChain = verdict.chain.served
        report.verifiedChain = verdict.chain.verified
        report.reason = verdict.decision.reason
        report.customVerdict = verdict.custom
        switch verdict.decision {
        case .allow:
            report.verdict = .accepted
            report.detail = policy.policy.kind == .disable
                ? "policy disable: the chain was not evaluated"
                : "every check of the \(policy.policy.kind.rawValue) policy passed"
                    + (policy.policy.kind == .custom && verdict.custom == nil ? " (the command was not asked: the rule's expires has passed)" : "")
            if policy.learning?.isUnlearned == true {
                report.detail = "no pins learned yet: default evaluation passed, so the daemon would learn "
                    + "this chain's leaf and issuer keys (trust on first use)"
            }
        case let .allowAndReport(_, detail):
            report.verdict = .acceptedReportOnly
            report.detail = detail
        case let .block(_, detail):
            report.verdict = .rejected
            report.detail = detail
        }
    }
}

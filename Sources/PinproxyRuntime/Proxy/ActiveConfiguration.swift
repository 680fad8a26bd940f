import Foundation
import PinproxyCore

/// One generation of configuration, built and ready: the validated
/// `Configuration` plus a `PreparedPolicy` per host rule and for
/// `default_policy`. Reload builds a new one off to the side and swaps the
/// reference; requests keep the generation they started with.
final class ActiveConfiguration: @unchecked Sendable {
    let configuration: Configuration
    let generation: Int
    /// Shorthands for the sections read on every request.
    var timeouts: Timeouts { configuration.timeouts }
    var limits: Limits { configuration.limits }
    var upstreamReuse: UpstreamReuse { configuration.upstreamReuse }
    /// `timeouts.idle`, converted once (it is set on every exchange).
    let idleTimeout: EventTimeout
    /// Where requests may go under this generation (the session machine's input).
    let rules: RequestRules
    /// The local CA that intercepted CONNECTs are served under (SPEC §3.1);
    /// nil without `interception`. Its scope is `rules.interception`.
    let interception: InterceptionAuthority?
    /// Each rule's prepared policy, at the rule's position in `configuration.policies.rules`.
    private let rulePolicies: [PreparedPolicy]
    /// The gateways' rules and their prepared policies, found first by
    /// `policy(forRule:)`: every request of a gateway asks for the same one.
    private var gatewayPolicies: [(rule: String, policy: PreparedPolicy)] = []  // set once, at the end of init
    /// Every rule's counters, in the configuration's order, `default_policy` last (SPEC §6).
    let ruleCounters: [RuleCounters]
    /// The file this generation was read from, for the commands warnings name.
    private let configPath: String?
    /// nil when `default_policy` is `deny`.
    private let defaultPolicy: PreparedPolicy?
    /// What rules with `"pins": "learn"` learned (SPEC §2.1); nil when no rule learns.
    let learnedPins: LearnedPinStore?
    /// Runs `custom` rules' commands, for the whole process: every generation
    /// takes `previous`'s, so `limits.custom_checks` bounds them all.
    let customChecks: CustomCheckExecutor
    /// What every rule's verification shares (the trust store's contents, the
    /// public suffix list's parse); nil when it could not be read whole.
    let verificationEnvironment: VerificationEnvironment?

    struct VerificationEnvironment: Equatable {
        var trustStoreDigest: [UInt8]
        var publicSuffixSerial: Int
    }

    /// Loads every file the policies name and builds their TLS contexts.
    /// Errors name the host rule (as a JSON path) and the file.
    ///
    /// With `interception`, the CA in `ca_dir` is loaded too (`loadsInterception`
    /// false skips it, for `probe`, which makes no client-side TLS): a missing
    /// or unusable CA, or one with loose key modes, fails the build with the fix
    /// named (`configPath` completes the `pinproxy ca init --config …` it names).
    /// `previous`'s CA is kept when the files are unchanged (its leaf cache
    /// and session tickets survive a reload).
    /// `metrics`: the daemon's counters, which the rules' counters come from.
    /// When a rule learns its pins, the learned-pins file is read (a file that
    /// is malformed or that others can write fails the build, naming it) into
    /// `previous`'s store, which every generation shares; `recordsLearnedPins`
    /// false (`probe`) learns nothing and writes nothing.
    init(configuration: Configuration, generation: Int, previous: ActiveConfiguration? = nil,
         configPath: String? = nil, loadsInterception: Bool = true, metrics: MetricsRegistry? = nil,
         recordsLearnedPins: Bool = true, now: Date = Date()) throws {
        self.configuration = configuration
        self.generation = generation
        self.configPath = configPath
        idleTimeout = EventTimeout(configuration.timeouts.idle)
        if let section = configuration.interception, loadsInterception {
            do {
                interception = try InterceptionAuthority.load(directory: section.caDirectory, at: now,
                                                              reusing: previous?.interception, configPath: configPath)
            } catch {
                throw RuntimeError.message("$.interception.ca_dir: \(error)")
            }
        } else {
            interception = nil
        }
        rules = RequestRules(configuration, interception: interception?.scope)
        let trustStore: TrustStore
        do {
            trustStore = try TrustStore.system(path: configuration.trustStorePath)
        } catch {
            throw RuntimeError.message(Self.located(error, configuration.trustStorePath ?? "", under: "$.trust_store", in: configuration))
        }
        // SPEC §2.3: a wildcard never covers a public suffix; the list is parsed again only when the file changed.
        let publicSuffixes: PublicSuffixList
        let publicSuffixSerial: Int
        do {
            (publicSuffixes, publicSuffixSerial) = try PublicSuffixCache.versionedList()
        } catch {
            throw RuntimeError.message("\(error)")
        }
        let directories = configuration.trustStorePath == nil ? TrustStore.defaultCertificateDirectories : []
        verificationEnvironment = trustStore.contentDigest(directories: directories).map {
            VerificationEnvironment(trustStoreDigest: $0, publicSuffixSerial: publicSuffixSerial)
        }
        learnedPins = try Self.learnedPinStore(for: configuration, previous: previous, records: recordsLearnedPins)
        customChecks = previous?.customChecks ?? CustomCheckExecutor()
        var problems: [String] = []
        var policies: [PreparedPolicy] = []
        policies.reserveCapacity(configuration.policies.rules.count)
        metrics?.reserveRules(configuration.policies.rules.count + 1)
        let contexts = TLSClientContextCache()
        let materials = PolicyMaterialCache()
        for rule in configuration.policies.rules {
            do {
                policies.append(try PreparedPolicy(ruleName: rule.key, policy: rule.policy, trustStore: trustStore,
                                                   publicSuffixes: publicSuffixes, contexts: contexts, materials: materials,
                                                   metrics: metrics, learnedPins: learnedPins, customChecks: customChecks,
                                                   customCheckLimit: configuration.limits.customChecks))
            } catch {
                problems.append(Self.located(error, under: "$.hosts[\"\(rule.key)\"]", in: configuration))
            }
        }
        var fallback: PreparedPolicy?
        if case let .policy(policy) = configuration.policies.defaultPolicy {
            do {
                fallback = try PreparedPolicy(ruleName: "default_policy", policy: policy, trustStore: trustStore,
                                              publicSuffixes: publicSuffixes, contexts: contexts, materials: materials,
                                              metrics: metrics, customChecks: customChecks,
                                              customCheckLimit: configuration.limits.customChecks)
            } catch {
                problems.append(Self.located(error, under: "$.default_policy", in: configuration))
            }
        }
        guard problems.isEmpty else { throw RuntimeError.message(problems.joined(separator: "\n")) }
        rulePolicies = policies
        defaultPolicy = fallback
        ruleCounters = policies.map(\.counters) + (fallback.map { [$0.counters] } ?? [])
        gatewayPolicies = rules.gatewayRuleKeys.compactMap { key in policy(forRule: key).map { (key, $0) } }
    }

    /// `error` at the line of the member that names its file
    /// (`FILE:LINE: $.hosts["x"].anchors[0]: /path: what is wrong`), else at `pathPrefix`.
    private static func located(_ error: any Error, _ file: String? = nil, under pathPrefix: String,
                                in configuration: Configuration) -> String {
        let named = (error as? FileLoadError)?.path ?? file
        guard let named, let location = configuration.location(ofFile: named, under: pathPrefix) else {
            return "\(pathPrefix): \(error)"
        }
        return "\(location): \(error)"
    }

    /// The store learning rules share, read afresh from the file: `previous`'s
    /// (so that two generations never learn one rule twice), or a new one; nil
    /// when no rule learns. A recording store needs a directory it can write.
    private static func learnedPinStore(for configuration: Configuration, previous: ActiveConfiguration?,
                                        records: Bool) throws -> LearnedPinStore? {
        guard configuration.policies.rules.contains(where: { $0.policy.learnsPins }) else { return nil }
        let file = LearnedPinFile(path: configuration.learnedPinsPath)
        let store = previous?.learnedPins.flatMap { $0.file.path == file.path && $0.records == records ? $0 : nil }
            ?? LearnedPinStore(file: file, records: records)
        do {
            if records { try file.checkWritable() }
            try store.reload()
        } catch {
            throw RuntimeError.message("learned pins: \(error)")
        }
        return store
    }

    /// A generation is let go of on a serving loop (the swap at a reload, or
    /// the last exchange that started under it), and freeing 100,000 rules
    /// takes a tenth of a second: the rules and their prepared policies are
    /// handed to the `LowPriorityQueue` to be freed there.
    ///
    /// The queue's references must be the last ones: this object's own are
    /// released only after `deinit` returns, and a queue that ran at once
    /// (a Dispatch queue at the default priority preempted the loop on a
    /// shared CPU) let go first, so the loop freed the rules after all (perf:
    /// a reload of 100,000 rules stalled it 0.2 s). The queue holds them a
    /// second before letting go.
    deinit {
        let retiring = LoopBound((configuration, rules, rulePolicies, ruleCounters, gatewayPolicies))
        LowPriorityQueue.shared.async(after: 1) { withExtendedLifetime(retiring) {} }
    }

    /// File-backed findings that do not stop pinproxy but must not pass
    /// silently (SPEC §2.1: a CRL past its nextUpdate), each with the rule's JSON path.
    func warnings(at now: Date) -> [String] {
        fileWarnings(at: now) + interceptionWarnings(at: now)
    }

    /// The warnings about the policies' files (a stale CRL).
    func fileWarnings(at now: Date) -> [String] {
        var warnings: [String] = []
        // In key order, as always; only the few rules with CRLs are sorted, not all 100,000.
        for prepared in rulePolicies.filter({ $0.material.revocationLists != nil }).sorted(by: { $0.ruleName < $1.ruleName }) {
            warnings += prepared.material.staleRevocationLists(at: now).map { "$.hosts[\"\(prepared.ruleName)\"].crl_files: " + $0 }
        }
        if let defaultPolicy {
            warnings += defaultPolicy.material.staleRevocationLists(at: now).map { "$.default_policy.crl_files: " + $0 }
        }
        return warnings
    }

    /// One line per intercepted host the CA does not cover (its CONNECTs get
    /// 403 until the CA is re-issued), and a CA in its last 30 days.
    func interceptionWarnings(at now: Date) -> [String] {
        guard let interception else { return [] }
        var warnings = interception.scope.uncoveredRules(in: configuration.policies).map { rule in
            "$.hosts[\"\(rule.key)\"]: not covered by the interception CA in \(interception.directory) "
                + "(it issues for \(interception.scope.names.joined(separator: ", "))): CONNECT to it gets 403; "
                + "run `\(InterceptionCAError.initCommand(configPath: configPath))` to re-issue the CA"
        }
        let left = interception.notAfter.timeIntervalSince(now)
        if left < 30 * 86_400 {
            warnings.append("$.interception.ca_dir: the interception CA in \(interception.directory) expires "
                + "\(RFC3339Timestamp.seconds(interception.notAfter)) (in \(Int(left / 86_400)) days): "
                + "run `\(InterceptionCAError.initCommand(configPath: configPath))` and have clients trust the new root")
        }
        return warnings
    }

    /// The policy for an upstream host (SPEC §2.2 precedence); nil = denied.
    func policy(for host: HostName) -> PreparedPolicy? {
        configuration.policies.rulePosition(for: host).map { rulePolicies[$0] } ?? defaultPolicy
    }

    /// Whether a connection (or TLS session) `old` verified for `key` is one
    /// this generation would verify alike, so a reload may keep it pooled
    /// under this generation's key (SPEC §3: what the old policy verified
    /// is retired; a policy the reload left as it was is not old). Alike
    /// means: the rule's policy, its files' contents, the trust store's
    /// contents, the public suffix list, the upstream's `resolve` entry,
    /// `timeouts.idle` (a pooled connection keeps its generation's) and
    /// `upstream_reuse` (an operator who turns reuse off wants every
    /// connection verified) are all unchanged; learning and custom rules
    /// never carry over.
    func verifiesAlike(_ key: PoolKey, as old: ActiveConfiguration) -> Bool {
        guard key.generation == old.generation, let environment = verificationEnvironment,
              environment == old.verificationEnvironment,
              configuration.timeouts.idle == old.configuration.timeouts.idle,
              configuration.upstreamReuse == old.configuration.upstreamReuse,
              configuration.resolveOverrides[key.endpoint] == old.configuration.resolveOverrides[key.endpoint],
              let before = old.policy(forRule: key.rule), let after = policy(forRule: key.rule) else { return false }
        return after.verifiesAlike(before)
    }

    /// The prepared policy of a rule key the session machine chose
    /// (`ViolationEvent.defaultPolicyRule` for `default_policy`); nil when unknown.
    func policy(forRule key: String) -> PreparedPolicy? {
        // A gateway's rule key is the very string `RequestRules` handed out,
        // so `==` ends at its identical-storage fast path.
        for (rule, policy) in gatewayPolicies where rule == key { return policy }
        return key == ViolationEvent.defaultPolicyRule ? defaultPolicy
            : configuration.policies.rulePosition(forKey: key).map { rulePolicies[$0] }
    }
}

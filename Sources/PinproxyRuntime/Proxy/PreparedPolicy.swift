import Foundation
import PinproxyCore

/// A trust policy made ready for handshakes: its files loaded, its pins
/// digested, its `SSL_CTX` built (or shared with rules of the same TLS settings). Shared by every loop (an `SSL_CTX` is safe
/// to create `SSL`s from concurrently) and immutable.
final class PreparedPolicy: @unchecked Sendable {
    /// The matched `hosts` key, or `default_policy`: the log's `rule`.
    let ruleName: String
    let policy: TrustPolicy
    /// Shared by the rules with the same pins and files (`PolicyMaterialCache`).
    let material: PolicyMaterial
    let pinMaterial: PinMaterial
    let context: TLSClientContext
    /// The configured pins (inline and from `public_keys` files) as `sha256/…`.
    /// Spelled when asked for (a violation, `probe`), not kept for each of 100,000 rules.
    var configuredPins: [String] { material.pinnedSPKIDigests.compactMap { SPKIPin(digest: $0)?.description } }
    /// `sha256/…` pins as the log's `known_pins` shows them: the configured
    /// ones, or those a learning rule learned.
    var knownPins: [String] { learning?.knownPins ?? configuredPins }
    /// The policy's check (SPEC §2.3), built on the rule's first handshake and
    /// then kept: every handshake and `probe --chain` run this same value,
    /// unless the rule learns its pins. Most rules of a large configuration
    /// never see a handshake, and a check is some twenty objects.
    /// A learning rule's own check has no pins and matches nothing (fail closed).
    var check: TrustCheck {
        builtCheck.withLock { built in
            if let built { return built }
            let check = TrustCheck(policy: policy, material: pinMaterial, publicSuffixes: publicSuffixes)
            built = check
            return check
        }
    }
    private let builtCheck = Locked<TrustCheck?>(nil)
    private let publicSuffixes: PublicSuffixList
    /// `"pins": "learn"`: the check that stands in for `check`; nil for every
    /// other rule (and for a learning rule prepared without a store, which
    /// then blocks everything rather than trust anything unpinned).
    let learning: PinLearning?
    /// Where this rule's traffic is counted (SPEC §6).
    let counters: RuleCounters
    /// `policy: "custom"`: its command, cache and executor; nil for every other policy.
    let custom: CustomEvaluation?

    /// `contexts`: where rules with the same TLS settings find their shared
    /// `SSL_CTX`, `materials` where rules with the same pins and files find
    /// their shared material (one cache each per configuration generation);
    /// `metrics`: the daemon's counters (nil: counted nowhere shown, for
    /// `check` and `probe`); `learnedPins`: where a rule with `"pins": "learn"`
    /// learns; `customChecks`: what runs a `custom` rule's command, at most
    /// `customCheckLimit` at once.
    init(ruleName: String, policy: TrustPolicy, trustStore: TrustStore, publicSuffixes: PublicSuffixList,
         contexts: TLSClientContextCache = TLSClientContextCache(), materials: PolicyMaterialCache = PolicyMaterialCache(),
         metrics: MetricsRegistry? = nil, learnedPins: LearnedPinStore? = nil, customChecks: CustomCheckExecutor? = nil,
         customCheckLimit: Int = Limits().customChecks) throws {
        self.ruleName = ruleName
        self.policy = policy
        self.publicSuffixes = publicSuffixes
        custom = policy.customCheck.map {
            CustomEvaluation(rule: ruleName, settings: $0, limit: customCheckLimit, executor: customChecks ?? CustomCheckExecutor())
        }
        material = try materials.material(for: policy)
        pinMaterial = PinMaterial(spkiDigests: material.pinnedSPKIDigests,
                                  certificateDERs: material.pinnedCertificates.map { $0.facts.der })
        context = try contexts.context(for: policy, material: material, trustStore: trustStore)
        // Every digest the runtime makes is 32 bytes; the filter keeps the counters' pins those `configuredPins` spells.
        let digests = material.pinnedSPKIDigests.allSatisfy({ $0.count == 32 })
            ? material.pinnedSPKIDigests : material.pinnedSPKIDigests.filter { $0.count == 32 }
        let learning = policy.learnsPins ? learnedPins.map {
            PinLearning(rule: ruleName, policy: policy, store: $0, publicSuffixes: publicSuffixes)
        } : nil
        self.learning = learning
        // A learning rule's sightings are of the pins it learned (SPEC §6: pins seen and never seen).
        var learned: (@Sendable () -> RuleCounters.Pins?)?
        if let learning {
            learned = { @Sendable () -> RuleCounters.Pins? in
                guard let pins = learning.learnedPins else { return nil }
                return RuleCounters.Pins(names: pins.pins.map(\.description), digests: pins.digests)
            }
        }
        counters = metrics?.rule(ruleName, pinDigests: digests, learned: learned)
            ?? RuleCounters(rule: ruleName, pinDigests: digests, loops: 1, learned: learned)
    }

    /// Whether what `other` verified, this policy would verify alike: the
    /// same rule, the same settings and the same loaded material (the files'
    /// contents, not their names). A learning rule judges by what it has
    /// learned and a custom rule by a command that may have changed since:
    /// neither is ever alike (the settings are compared, so `other`'s are
    /// this one's). (The trust store and the public suffix list are the
    /// generation's: `ActiveConfiguration.verifiesAlike`.)
    func verifiesAlike(_ other: PreparedPolicy) -> Bool {
        guard !policy.learnsPins, policy.customCheck == nil, !material.contentDigest.isEmpty else { return false }
        return ruleName == other.ruleName && policy == other.policy && material.contentDigest == other.material.contentDigest
    }

    /// The verification state of one handshake with `host` under this policy,
    /// which runs `check` (or the learning rule's current one) inside the
    /// handshake and keeps the verdict.
    func handshake(host: HostName, port: UInt16) -> UpstreamHandshake {
        guard let learning else {
            return UpstreamHandshake(host: host, port: port, check: check, material: material, trustStore: context.trustStore,
                                     custom: custom)
        }
        let (current, learns) = learning.currentCheck()
        let handshake = UpstreamHandshake(host: host, port: port, check: current, material: material,
                                          trustStore: context.trustStore)
        handshake.learnsPins = learns
        return handshake
    }
}

import Foundation
import PinproxyCore

/// A trust policy made ready for handshakes: its files loaded, its pins
/// digested, its `SSL_CTX` built (or shared with rules of the same TLS settings). Shared by every loop (an `SSL_CTX` is safe
/// to create `SSL`s from concurrently) and immutable.
final class PreparedPolicy: @unchecked Sendable {
    /// The matched `hosts` key, or `default_policy`: the log's `rule`.
    let ruleName: String
    let policy: TrustPolicy
    let material: PolicyMaterial
    let pinMaterial: PinMaterial
    let context: TLSClientContext
    /// The configured pins (inline and from `public_keys` files) as `sha256/…`.
    let configuredPins: [String]
    /// `sha256/…` pins as the log's `known_pins` shows them: the configured
    /// ones, or those a learning rule learned.
    var knownPins: [String] { learning?.knownPins ?? configuredPins }
    /// The policy's check (SPEC §2.3), built once: every handshake and
    /// `probe --chain` run this same value, unless the rule learns its pins.
    /// A learning rule's own check has no pins and matches nothing (fail closed).
    let check: TrustCheck
    /// `"pins": "learn"`: the check that stands in for `check`; nil for every
    /// other rule (and for a learning rule prepared without a store, which
    /// then blocks everything rather than trust anything unpinned).
    let learning: PinLearning?
    /// Where this rule's traffic is counted (SPEC §6).
    let counters: RuleCounters
    /// `policy: "custom"`: its command, cache and executor; nil for every other policy.
    let custom: CustomEvaluation?

    /// `contexts`: where rules with the same TLS settings find their shared
    /// `SSL_CTX` (one cache per configuration generation); `metrics`: the
    /// daemon's counters (nil: counted nowhere shown, for `check` and `probe`);
    /// `learnedPins`: where a rule with `"pins": "learn"` learns; `customChecks`:
    /// what runs a `custom` rule's command, at most `customCheckLimit` at once.
    init(ruleName: String, policy: TrustPolicy, trustStore: TrustStore, publicSuffixes: PublicSuffixList,
         contexts: TLSClientContextCache = TLSClientContextCache(), metrics: MetricsRegistry? = nil,
         learnedPins: LearnedPinStore? = nil, customChecks: CustomCheckExecutor? = nil,
         customCheckLimit: Int = Limits().customChecks) throws {
        self.ruleName = ruleName
        self.policy = policy
        custom = policy.customCheck.map {
            CustomEvaluation(rule: ruleName, settings: $0, limit: customCheckLimit, executor: customChecks ?? CustomCheckExecutor())
        }
        material = try PolicyMaterial.load(for: policy)
        pinMaterial = PinMaterial(spkiDigests: material.pinnedSPKIDigests,
                                  certificateDERs: material.pinnedCertificates.map { $0.facts.der })
        context = try contexts.context(for: policy, material: material, trustStore: trustStore)
        let pins = material.pinnedSPKIDigests.compactMap { digest in SPKIPin(digest: digest).map { ($0.description, digest) } }
        configuredPins = pins.map(\.0)
        check = TrustCheck(policy: policy, material: pinMaterial, publicSuffixes: publicSuffixes)
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
        counters = metrics?.rule(ruleName, pins: configuredPins, pinDigests: pins.map(\.1), learned: learned)
            ?? RuleCounters(rule: ruleName, pins: configuredPins, pinDigests: pins.map(\.1), loops: 1, learned: learned)
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

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
    /// `sha256/…` pins as the log's `known_pins` shows them.
    let knownPins: [String]
    /// The policy's check (SPEC §2.3), built once: every handshake and
    /// `probe --chain` run this same value.
    let check: TrustCheck
    /// Where this rule's traffic is counted (SPEC §6).
    let counters: RuleCounters

    /// `contexts`: where rules with the same TLS settings find their shared
    /// `SSL_CTX` (one cache per configuration generation); `metrics`: the
    /// daemon's counters (nil: counted nowhere shown, for `check` and `probe`).
    init(ruleName: String, policy: TrustPolicy, trustStore: TrustStore, publicSuffixes: PublicSuffixList,
         contexts: TLSClientContextCache = TLSClientContextCache(), metrics: MetricsRegistry? = nil) throws {
        self.ruleName = ruleName
        self.policy = policy
        material = try PolicyMaterial.load(for: policy)
        pinMaterial = PinMaterial(spkiDigests: material.pinnedSPKIDigests,
                                  certificateDERs: material.pinnedCertificates.map { $0.facts.der })
        context = try contexts.context(for: policy, material: material, trustStore: trustStore)
        let pins = material.pinnedSPKIDigests.compactMap { digest in SPKIPin(digest: digest).map { ($0.description, digest) } }
        knownPins = pins.map(\.0)
        counters = metrics?.rule(ruleName, pins: knownPins, pinDigests: pins.map(\.1))
            ?? RuleCounters(rule: ruleName, pins: knownPins, pinDigests: pins.map(\.1), loops: 1)
        check = TrustCheck(policy: policy, material: pinMaterial, publicSuffixes: publicSuffixes)
    }

    /// The verification state of one handshake with `host` under this policy,
    /// which runs `check` inside the handshake and keeps the verdict.
    func handshake(host: HostName, port: UInt16) -> UpstreamHandshake {
        UpstreamHandshake(host: host, port: port, check: check, material: material, trustStore: context.trustStore)
    }
}

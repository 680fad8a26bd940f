import Foundation
import PinproxyCore

/// A trust policy made ready for handshakes: its files loaded, its pins
/// digested, its `SSL_CTX` built. Shared by every loop (an `SSL_CTX` is safe
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
    /// The policy's checks (SPEC §2.3), built once: every handshake and
    /// `probe --chain` run this same value.
    let evaluator: any TrustEvaluator

    init(ruleName: String, policy: TrustPolicy, trustStore: TrustStore, publicSuffixes: PublicSuffixList) throws {
        self.ruleName = ruleName
        self.policy = policy
        material = try PolicyMaterial.load(for: policy)
        pinMaterial = PinMaterial(spkiDigests: material.pinnedSPKIDigests,
                                  certificateDERs: material.pinnedCertificates.map { $0.facts.der })
        context = try TLSClientContext(policy: policy, material: material, trustStore: trustStore)
        knownPins = material.pinnedSPKIDigests.compactMap { SPKIPin(digest: $0)?.description }
        evaluator = PolicyEvaluation.evaluator(for: policy, material: pinMaterial, publicSuffixes: publicSuffixes)
    }

    /// What the policy finds and decides about `chain` at `now` (`enforce: false` turns a block into a report).
    func verdict(for chain: PeerChain, now: Date) -> TrustVerdict {
        let evaluation = evaluator.evaluate(chain, now: now)
        return TrustVerdict(evaluation: evaluation, decision: TrustDecision(evaluation, enforce: policy.enforce),
                            chain: chain)
    }

    /// The verification state of one handshake with `host` under this policy;
    /// `decide` is called with the facts inside the handshake.
    func handshake(host: HostName, port: UInt16, decide: @escaping (PeerChain) -> Bool) -> UpstreamHandshake {
        UpstreamHandshake(host: host, port: port, policy: policy, material: material,
                          trustStore: context.trustStore, decide: decide)
    }
}

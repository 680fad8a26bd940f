import Foundation
import Testing
@testable import PinproxyCore

/// SPEC §2.1 `"pins": "learn"`: before a rule has learned, its connections
/// are judged by `default` evaluation under the rule's own settings, and what
/// it learned is judged exactly as configured pins would be.
@Suite("First use: default evaluation guards a learning rule until it has learned")
struct FirstUseEvaluationTests {
    static let learning = TrustPolicy(kind: .pinPublicKeys, learnsPins: true)

    static func verdict(_ policy: TrustPolicy, _ chain: PeerChain) -> TrustEvaluation {
        TrustCheck(policy: policy, evaluator: PolicyEvaluation.firstUseEvaluator(for: policy, publicSuffixes: FakePKI.publicSuffixes))
            .verdict(for: chain, now: FakePKI.now).evaluation
    }

    @Test("the first-use check decides as default does: trusted chain and host pass, the first failing step is the reason",
          arguments: [
              (FakePKI.validChain(), nil),
              (FakePKI.validChain(hostMatches: false), ViolationReason.hostnameMismatch),
              (FakePKI.failedChain(.untrusted(detail: "unknown CA"), served: [FakePKI.selfSigned], signingPath: [FakePKI.selfSigned]),
               ViolationReason.chainUntrusted),
              (FakePKI.failedChain(.expired, served: [FakePKI.expiredLeaf], signingPath: [FakePKI.expiredLeaf]),
               ViolationReason.certificateExpired),
          ] as [(PeerChain, ViolationReason?)])
    func asDefault(chain: PeerChain, reason: ViolationReason?) {
        #expect(Self.verdict(Self.learning, chain).reason == reason)
        let standard = TrustCheck(policy: .standard, material: PinMaterial(), publicSuffixes: FakePKI.publicSuffixes)
        #expect(standard.verdict(for: chain, now: FakePKI.now).evaluation.reason == reason)
    }

    @Test("validate_host false is honoured; validate_chain false is not: nothing pinned can stand in for the store yet")
    func ruleSettings() {
        var policy = Self.learning
        policy.validateHost = false
        #expect(Self.verdict(policy, FakePKI.validChain(hostMatches: false)) == .trusted)
        policy.validateChain = false
        let selfSigned = FakePKI.failedChain(.untrusted(detail: "self-signed"), served: [FakePKI.selfSigned],
                                             signingPath: [FakePKI.selfSigned])
        #expect(Self.verdict(policy, selfSigned).reason == .chainUntrusted)
    }

    @Test("a learning rule's own check, with nothing learned, matches nothing (fail closed)")
    func unlearnedFailsClosed() {
        let check = TrustCheck(policy: Self.learning, material: PinMaterial(), publicSuffixes: FakePKI.publicSuffixes)
        #expect(check.verdict(for: FakePKI.validChain(), now: FakePKI.now).evaluation.reason == .pinMismatch)
    }
}

import Foundation
import Testing
@testable import PinproxyCore

private typealias P = FakePKI

@Suite("Trust evaluators")
struct TrustEvaluatorTests {
    @Test("reason codes are the stable identifiers of SPEC §4",
          arguments: [(ViolationReason.pinMismatch, "pin_mismatch"), (.chainUntrusted, "chain_untrusted"),
                      (.certificateExpired, "certificate_expired"),
                      (.certificateNotYetValid, "certificate_not_yet_valid"),
                      (.hostnameMismatch, "hostname_mismatch"), (.certificateRevoked, "certificate_revoked")])
    func reasonCodes(_ reason: ViolationReason, _ code: String) {
        #expect(reason.rawValue == code)
        #expect(ViolationReason(rawValue: code) == reason)
    }

    @Test("constant-time comparison is exact byte equality",
          arguments: [([UInt8](), [UInt8](), true), ([1, 2, 3], [1, 2, 3], true), ([1, 2, 3], [1, 2, 4], false),
                      ([0, 2, 3], [1, 2, 3], false), ([1, 2], [1, 2, 3], false), ([1, 2, 3], [1, 2], false)])
    func constantTimeEquality(_ a: [UInt8], _ b: [UInt8], _ equal: Bool) {
        #expect(ConstantTimeBytes.equal(a, b) == equal)
    }

    @Test("any-equal finds a match in any position and nothing in empty inputs")
    func anyEqual() {
        #expect(ConstantTimeBytes.anyEqual([[1], [2], [3]], [[9], [3]]))
        #expect(!ConstantTimeBytes.anyEqual([[1], [2]], [[3]]))
        #expect(!ConstantTimeBytes.anyEqual([], [[1]]))
        #expect(!ConstantTimeBytes.anyEqual([[1]], []))
    }

    @Test("a chain without a verdict and without a verified chain is untrusted")
    func missingVerifiedChain() {
        let chain = PeerChain(served: [P.leaf], verified: nil, chainFailure: nil, signingPath: [P.leaf], hostMatches: true)
        #expect(ChainValidationEvaluator().evaluate(chain, now: P.now)
                == .failed(reason: .chainUntrusted, detail: "path validation produced no verified chain"))
    }

    @Test("verified certificates are re-checked against the injected time, notAfter inclusive")
    func verifiedValidityAtNow() {
        let chain = P.validChain()
        let evaluator = ChainValidationEvaluator()
        #expect(evaluator.evaluate(chain, now: P.leaf.notAfter) == .trusted)
        #expect(evaluator.evaluate(chain, now: P.leaf.notBefore) == .trusted)
        #expect(evaluator.evaluate(chain, now: P.leaf.notAfter + 1)
                == .failed(reason: .certificateExpired,
                           detail: "certificate CN=api.example.com expired at 2027-10-31T12:00:00Z"))
        #expect(evaluator.evaluate(chain, now: P.leaf.notBefore - 1)
                == .failed(reason: .certificateNotYetValid,
                           detail: "certificate CN=api.example.com is not valid before 2026-10-31T12:00:00Z"))
    }

    @Test("OpenSSL's time verdicts keep a generic detail when no served certificate shows it")
    func timeVerdictWithoutEvidence() {
        let expired = P.failedChain(.expired, served: [P.leaf], signingPath: [P.leaf])
        let future = P.failedChain(.notYetValid, served: [P.leaf], signingPath: [P.leaf])
        #expect(ChainValidationEvaluator().evaluate(expired, now: P.now)
                == .failed(reason: .certificateExpired, detail: "a certificate of the chain has expired"))
        #expect(ChainValidationEvaluator().evaluate(future, now: P.now)
                == .failed(reason: .certificateNotYetValid, detail: "a certificate of the chain is not yet valid"))
    }

    @Test("host evaluation without a served leaf still names the failure")
    func hostWithoutLeaf() {
        let chain = PeerChain(served: [], verified: nil, chainFailure: nil, signingPath: [], hostMatches: false)
        #expect(HostNameEvaluator().evaluate(chain, now: P.now)
                == .failed(reason: .hostnameMismatch,
                           detail: "the server's leaf certificate does not match the upstream host name"))
    }

    @Test("key pins match the chosen scope only")
    func keyPinScopes() {
        let chain = P.validChain()
        let rootPin = [P.root.spkiSHA256]
        #expect(PublicKeyPinEvaluator(pins: rootPin, scope: .verifiedChain).evaluate(chain, now: P.now) == .trusted)
        #expect(PublicKeyPinEvaluator(pins: rootPin, scope: .signingPath).evaluate(chain, now: P.now)
                == .failed(reason: .pinMismatch, detail: "no certificate in the leaf's signing path matches a pinned public key"))
    }

    @Test("the composite reports the first failure and trusts when empty")
    func compositeOrder() {
        let chain = P.failedChain(.untrusted(detail: "x"), served: [P.leaf], signingPath: [P.leaf], hostMatches: false)
        #expect(CompositeEvaluator([]).evaluate(chain, now: P.now) == .trusted)
        #expect(CompositeEvaluator([HostNameEvaluator(), ChainValidationEvaluator()]).evaluate(chain, now: P.now).reason
                == .hostnameMismatch)
        #expect(CompositeEvaluator([ChainValidationEvaluator(), HostNameEvaluator()]).evaluate(chain, now: P.now).reason
                == .chainUntrusted)
        #expect(CompositeEvaluator([DisabledEvaluator(), HostNameEvaluator()]).evaluate(chain, now: P.now).reason
                == .hostnameMismatch)
    }

    @Test("a decision says whether to relay and what to log",
          arguments: [(TrustDecision.allow, true, ViolationReason?.none, String?.none),
                      (.allowAndReport(reason: .pinMismatch, detail: "d"), true, .pinMismatch, "d"),
                      (.block(reason: .hostnameMismatch, detail: "e"), false, .hostnameMismatch, "e")])
    func decisionProperties(_ decision: TrustDecision, _ relays: Bool, _ reason: ViolationReason?, _ detail: String?) {
        #expect(decision.permitsRelay == relays)
        #expect(decision.reason == reason)
        #expect(decision.detail == detail)
    }

    @Test("pin material from a policy puts inline pins first without repeats")
    func materialFromPolicy() throws {
        let inline = try #require(SPKIPin(digest: P.leaf.spkiSHA256))
        let policy = TrustPolicy(kind: .pinPublicKeys, pins: [inline])
        let material = PinMaterial(policy: policy, publicKeyDigests: [P.root.spkiSHA256, P.leaf.spkiSHA256, [1, 2]])
        #expect(material.spkiDigests == [P.leaf.spkiSHA256, P.root.spkiSHA256, [1, 2]])
        #expect(material.pinSpellings == ["sha256/ERERERERERERERERERERERERERERERERERERERERERE=",
                                          "sha256/MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM="])
    }
}

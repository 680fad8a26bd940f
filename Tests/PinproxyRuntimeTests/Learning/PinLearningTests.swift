import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// A learning rule's check over real certificates (SPEC §2.1): default
/// evaluation until it learns, the learned pins afterwards, and a connection
/// that lost the race to learn judged against the pins that won.
@Suite("Learned pins: a learning rule's check")
struct PinLearningTests {
    static let policy = TrustPolicy(kind: .pinPublicKeys, learnsPins: true)
    static let host = HostName("api.example.com")!

    /// A handshake's facts for `served` (leaf first), verified up to `root`.
    static func chain(_ served: [X509Certificate], root: X509Certificate) -> PeerChain {
        let facts = served.map(\.facts)
        return PeerChain(served: facts, verified: facts + [root.facts], chainFailure: nil, signingPath: facts, hostMatches: true)
    }

    static func learning(_ store: LearnedPinStore) throws -> PinLearning {
        PinLearning(rule: "api.example.com", policy: policy, store: store, publicSuffixes: try PublicSuffixCache.list())
    }

    static func store() throws -> (LearnedPinStore, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let store = LearnedPinStore(file: LearnedPinFile(path: directory.file("learned-pins.json")), records: true)
        try store.reload()
        return (store, directory)
    }

    @Test("unlearned, the check is default evaluation and learns; learned, a MITM is a pin mismatch and a renewed leaf under the same issuer passes")
    func learnThenEnforce() throws {
        let (store, directory) = try Self.store()
        defer { withExtendedLifetime(directory) {} }
        let real = try TestPKI.chain()
        let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        let learning = try Self.learning(store)
        let (firstUse, learns) = learning.currentCheck()
        #expect(learns)
        #expect(learning.knownPins == [])
        let first = firstUse.verdict(for: Self.chain(real.served, root: real.root.certificate), now: Date())
        #expect(first.decision == .allow)
        #expect(learning.learn(from: first, host: Self.host, now: Date()) == first)
        #expect(learning.knownPins == LearningBed.pins(of: real))

        let (pinned, learnsAgain) = learning.currentCheck()
        #expect(!learnsAgain)
        let mitm = pinned.verdict(for: Self.chain(attacker.served, root: attacker.root.certificate), now: Date())
        #expect(mitm.decision == .block(reason: .pinMismatch, detail: "no certificate in the validated chain matches a pinned public key"))
        let renewed = try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"], by: real.intermediate)
        let renewal = pinned.verdict(for: Self.chain([renewed.certificate, real.intermediate.certificate], root: real.root.certificate),
                                     now: Date())
        #expect(renewal.decision == .allow)
    }

    @Test("a connection that learned second is judged by the pins that won: another CA's chain is blocked, one under the winner's issuer passes")
    func secondLearnerJudgedByWinner() throws {
        let (store, directory) = try Self.store()
        defer { withExtendedLifetime(directory) {} }
        let real = try TestPKI.chain()
        let attacker = try TestPKI.chain(rootName: "Attacker Root CA")
        // Two generations' views of one rule share the store, as across a reload.
        let winner = try Self.learning(store), loser = try Self.learning(store)
        let firstUse = winner.firstUseCheck
        let realVerdict = firstUse.verdict(for: Self.chain(real.served, root: real.root.certificate), now: Date())
        let attackerVerdict = firstUse.verdict(for: Self.chain(attacker.served, root: attacker.root.certificate), now: Date())
        #expect(attackerVerdict.decision == .allow)
        _ = winner.learn(from: realVerdict, host: Self.host, now: Date())
        let settled = loser.learn(from: attackerVerdict, host: Self.host, now: Date())
        #expect(settled.decision.reason == .pinMismatch)
        #expect(!settled.decision.permitsRelay)
        #expect(settled.chain == attackerVerdict.chain)
        let sibling = try TestPKI.issue(name: "api.example.com", isCA: false, names: ["DNS:api.example.com"], by: real.intermediate)
        let siblingVerdict = firstUse.verdict(for: Self.chain([sibling.certificate, real.intermediate.certificate],
                                                              root: real.root.certificate), now: Date())
        #expect(loser.learn(from: siblingVerdict, host: Self.host, now: Date()).decision == .allow)
        #expect(store.pins(forRule: "api.example.com")?.pins.map(\.description) == LearningBed.pins(of: real))
    }

    @Test("a chain the first-use check did not accept teaches nothing, report-only or not")
    func refusedTeachesNothing() throws {
        let (store, directory) = try Self.store()
        defer { withExtendedLifetime(directory) {} }
        let real = try TestPKI.chain()
        let learning = try Self.learning(store)
        var facts = Self.chain(real.served, root: real.root.certificate)
        facts.hostMatches = false
        for enforce in [true, false] {
            var policy = Self.policy
            policy.enforce = enforce
            let check = TrustCheck(policy: policy, evaluator: PolicyEvaluation.firstUseEvaluator(
                for: policy, publicSuffixes: try PublicSuffixCache.list()))
            let refused = check.verdict(for: facts, now: Date())
            #expect(refused.decision.reason == .hostnameMismatch)
            #expect(learning.learn(from: refused, host: Self.host, now: Date()) == refused)
        }
        #expect(store.pins(forRule: "api.example.com") == nil)
    }
}

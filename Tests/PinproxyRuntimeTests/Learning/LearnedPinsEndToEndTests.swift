import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// SPEC §2.1 `"pins": "learn"` against real TLS servers, pinproxy in this
/// process: the first chain that passes `default` evaluation is learned and
/// kept, and from then on a MITM whose CA the trust store trusts is blocked
/// like any pin mismatch, while the real server is still relayed.
@Suite("Learned pins end to end: trust on first use", .serialized)
struct LearnedPinsEndToEndTests {
    @Test("the first verified chain's leaf and issuer keys are learned into learned-pins.json (0600); restarted on it, a MITM with a trusted CA gets 502 pin_mismatch with those known_pins, the real server 200")
    func learnThenBlockMITM() throws {
        let bed = try LearningBed()
        do {
            let world = try bed.world()
            try world.startUpstream()
            let proxy = try world.startProxy(environment: bed.environment)
            let first = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 15)
            #expect(first.status == 200)
            #expect(first.body == TestUpstream.pattern(10))
            E2EVerdict.expectNoEvent(proxy: proxy)
            let learned = try #require(try bed.waitForLearned())
            #expect(learned.pins.map(\.description) == LearningBed.pins(of: bed.real))
            #expect(learned.host == "api.example.com")
            #expect(learned.subjects == ["CN=api.example.com", "CN=Test Intermediate CA"])
            #expect(LearningBed.mode(of: bed.file) == 0o600)
        }
        // The first world (and its proxy) is gone: pinproxy starts again on the file.
        let world = try bed.world()
        let attacker = try bed.startAttacker(in: world)
        try world.startUpstream(resolving: ["api.example.com:8443"])
        let proxy = try world.startProxy(environment: bed.environment)
        let blocked = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10?token=secret"], timeout: 15)
        E2EVerdict.expectBlocked(blocked, reason: .pinMismatch, rule: LearningBed.rule, policy: .pinPublicKeys, proxy: proxy)
        #expect(proxy.sink.events.first?.knownPins == LearningBed.pins(of: bed.real))
        #expect(proxy.logLines().first?["known_pins"] as? [String] == LearningBed.pins(of: bed.real))
        E2EVerdict.expectNothingRelayed(attacker.waitForConnections(1))
        let relayed = try Curl.run(world.proxyArguments + ["http://api.example.com:8443/bytes/10"], timeout: 15)
        #expect(relayed.status == 200)
        #expect(relayed.body == TestUpstream.pattern(10))
        // Nothing was learned anew: the file still holds the real server's pins.
        #expect(try bed.learned().rules[LearningBed.rule]?.pins.map(\.description) == LearningBed.pins(of: bed.real))
        // SPEC §6: status shows the learned pins as the rule's, each seen in the relayed chain.
        let rule = try #require(proxy.daemon.metricsSnapshot().rules.first { $0.rule == LearningBed.rule })
        #expect(rule.pins.map(\.pin) == LearningBed.pins(of: bed.real))
        #expect(rule.pins.map(\.sightings) == [1, 1], "\(rule.pins)")
        #expect(rule.violations(.blocked) == 1)
    }

    /// A first server that `default` evaluation refuses.
    enum Refused: String, CaseIterable, Sendable {
        /// Its chain ends at a root the trust store does not hold.
        case untrustedRoot
        /// A chain to the trusted root, for another name.
        case otherName

        var reason: ViolationReason { self == .untrustedRoot ? .chainUntrusted : .hostnameMismatch }

        func serve(in world: TestWorld, bed: LearningBed) throws -> TestUpstream {
            switch self {
            case .untrustedRoot:
                let stranger = try TestPKI.chain(rootName: "Unknown Root CA")
                return try world.startUpstream(serving: stranger.served, key: stranger.leaf.key)
            case .otherName:
                let leaf = try TestPKI.issue(name: "other.example.com", isCA: false, names: ["DNS:other.example.com"],
                                             by: bed.real.intermediate)
                return try world.startUpstream(serving: [leaf.certificate, bed.real.intermediate.certificate], key: leaf.key)
            }
        }
    }

    @Test("a first connection that fails default evaluation is blocked and teaches nothing; the next one that passes is learned",
          arguments: Refused.allCases)
    func refusedFirstConnectionLearnsNothing(refused: Refused) throws {
        let bed = try LearningBed()
        let world = try bed.world()
        let impostor = try refused.serve(in: world, bed: bed)
        try world.startUpstream(resolving: ["api.example.com:8443"])
        let proxy = try world.startProxy(environment: bed.environment)
        let blocked = try Curl.run(world.proxyArguments + ["http://api.example.com/bytes/10"], timeout: 15)
        E2EVerdict.expectBlocked(blocked, reason: refused.reason, rule: LearningBed.rule, policy: .pinPublicKeys, proxy: proxy)
        #expect(proxy.sink.events.first?.knownPins == [])
        E2EVerdict.expectNothingRelayed(impostor.waitForConnections(1))
        let store = try #require(proxy.daemon.workers[0].configuration.learnedPins)
        #expect(store.pins(forRule: LearningBed.rule) == nil)
        store.waitForWrites()
        #expect(!FileManager.default.fileExists(atPath: bed.file))
        // Had the refused chain been learned, the real server would now be a pin mismatch.
        let relayed = try Curl.run(world.proxyArguments + ["http://api.example.com:8443/bytes/10"], timeout: 15)
        #expect(relayed.status == 200)
        #expect(try bed.waitForLearned()?.pins.map(\.description) == LearningBed.pins(of: bed.real))
    }

    @Test("two loops learning one rule at once agree on one pin set: one server is relayed and learned, the other is judged against its pins and blocked")
    func concurrentFirstConnections() throws {
        let bed = try LearningBed()
        let world = try bed.world(threads: 2)
        let realServer = try world.startUpstream(resolving: ["api.example.com:8443"])
        let attackerServer = try bed.startAttacker(in: world)
        let proxy = try world.startProxy(environment: bed.environment)
        let targets = ["http://api.example.com/bytes/10", "http://api.example.com:8443/bytes/10"]
        let results = CollectedValues<(String, Int)>()
        let proxyArguments = world.proxyArguments
        DispatchQueue.concurrentPerform(iterations: targets.count) { index in
            let status = (try? Curl.run(proxyArguments + [targets[index]], timeout: 15).status) ?? -1
            results.append((targets[index], status))
        }
        let statuses = Dictionary(uniqueKeysWithValues: results.all)
        #expect(statuses.values.sorted() == [200, 502], "statuses: \(statuses)")
        let learned = try #require(try bed.waitForLearned()).pins.map(\.description)
        let realWon = statuses[targets[1]] == 200
        #expect(learned == LearningBed.pins(of: realWon ? bed.real : bed.attacker))
        let event = try #require(proxy.sink.events.first)
        #expect(proxy.sink.events.count == 1)
        #expect(event.reason == .pinMismatch)
        #expect(event.knownPins == learned)
        E2EVerdict.expectNothingRelayed((realWon ? attackerServer : realServer).waitForConnections(1))
    }
}

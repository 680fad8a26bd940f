import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// What a reload leaves on the serving loop stays small whatever the size of
/// the configuration: the generation let go of is freed on the low-priority
/// queue, and the drift check after the swap samples only the rules that saw
/// traffic. (With 100,000 rules both ran on loop 0 and stalled it: a single
/// keep-alive client saw 0.7-1.2 s responses across a SIGHUP.)
@Suite("Reload: what stays on the serving loop", .serialized)
struct ReloadLoopWorkTests {
    private static func build(rules: Int, in directory: TemporaryDirectory) throws -> ActiveConfiguration {
        let root = try TestPKI.chain().root.certificate
        let store = try directory.write(TestPKI.pem(root), to: "root.pem")
        let pin = "sha256/" + String(repeating: "A", count: 43) + "="
        let hosts = (0..<rules).map { #""h\#($0).example.com": { "policy": "pin-public-keys", "pins": ["\#(pin)"] }"# }
        let text = """
        { "violation_log": "\(directory.file("v.jsonl"))", "trust_store": "\(store)",
          "hosts": { \(hosts.joined(separator: ",\n")) } }
        """
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<text>", environment: [:], cpuCount: 1)
        return try ActiveConfiguration(configuration: configuration, generation: 1)
    }

    @Test("the last reference to a generation returns at once; its rules are freed on the low-priority queue")
    func retiredGenerationIsFreedOffTheReleasingThread() throws {
        let directory = try TemporaryDirectory()
        var active: ActiveConfiguration? = try Self.build(rules: 50, in: directory)
        weak var prepared = active?.policy(forRule: "h7.example.com")
        #expect(prepared != nil)
        active = nil
        // The generation is gone; its rules wait a second for the queue, not for this thread.
        #expect(prepared != nil, "the rules were freed on the thread that let the generation go")
        #expect(eventually(timeout: 10) { prepared == nil }, "the low-priority queue never freed the rules")
    }

    @Test("a rule's counters have lanes only once a loop counted something for it")
    func lanesOnlyWithTraffic() throws {
        let directory = try TemporaryDirectory()
        let active = try Self.build(rules: 3, in: directory)
        #expect(active.ruleCounters.map(\.hasLanes) == [false, false, false, false])
        active.policy(forRule: "h1.example.com")?.counters.lane(0).requests.add()
        #expect(active.ruleCounters.map(\.hasLanes) == [false, true, false, false])
        // What is not sampled has nothing to say: no leaf was seen without a lane.
        #expect(active.ruleCounters.filter { !$0.hasLanes }.allSatisfy { $0.sample.leaf == nil })
    }
}

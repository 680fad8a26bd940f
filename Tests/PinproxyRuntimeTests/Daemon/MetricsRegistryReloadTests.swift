import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The metrics registry across reloads: a rule keeps its counters while its
/// name and pins stay, a rule a reload drops is forgotten, and the table
/// shrinks back to one generation's rules once the new one is swapped in
/// (`reserveRules` makes room for two while it is built).
@Suite("Metrics registry across reloads")
struct MetricsRegistryReloadTests {
    private static func build(hosts: [String], generation: Int, previous: ActiveConfiguration? = nil,
                              metrics: MetricsRegistry, in directory: TemporaryDirectory) throws -> ActiveConfiguration {
        let root = try TestPKI.chain().root.certificate
        let store = try directory.write(TestPKI.pem(root), to: "root.pem")
        let pin = "sha256/" + String(repeating: "A", count: 43) + "="
        let members = hosts.map { #""\#($0)": { "policy": "pin-public-keys", "pins": ["\#(pin)"] }"# }
        let text = """
        { "violation_log": "\(directory.file("v.jsonl"))", "trust_store": "\(store)",
          "hosts": { \(members.joined(separator: ",\n")) } }
        """
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<text>", environment: [:], cpuCount: 1)
        return try ActiveConfiguration(configuration: configuration, generation: generation, previous: previous,
                                       metrics: metrics)
    }

    @Test("a reload of the same rules keeps their counters and leaves a table sized for one generation")
    func sameRulesKeepCountersAndTableShrinks() throws {
        let directory = try TemporaryDirectory()
        let metrics = MetricsRegistry(loops: 1)
        let hosts = (0..<2_000).map { "h\($0).example.com" }
        let first = try Self.build(hosts: hosts, generation: 1, metrics: metrics, in: directory)
        let startSize = metrics.ruleTableSize
        #expect(startSize.count == hosts.count + 1)  // and default_policy's
        for generation in 2...4 {
            let next = try Self.build(hosts: hosts, generation: generation, previous: first, metrics: metrics, in: directory)
            #expect(zip(first.ruleCounters, next.ruleCounters).allSatisfy { $0 === $1 },
                    "an unchanged rule lost its counters")
            metrics.keepRules(of: next)
            let size = metrics.ruleTableSize
            #expect(size.count == hosts.count + 1)
            // Before: `filter` kept every entry and so handed back the table `reserveRules`
            // had doubled for the build (room for 6,144 rules here, against 3,072 at start).
            #expect(size.capacity == startSize.capacity, "generation \(generation): room for \(size.capacity) rules")
        }
    }

    @Test("a reload that renames rules forgets the old names")
    func renamedRulesAreForgotten() throws {
        let directory = try TemporaryDirectory()
        let metrics = MetricsRegistry(loops: 1)
        let first = try Self.build(hosts: (0..<100).map { "a\($0).example.com" }, generation: 1, metrics: metrics, in: directory)
        let next = try Self.build(hosts: (0..<100).map { "b\($0).example.com" }, generation: 2, previous: first,
                                  metrics: metrics, in: directory)
        #expect(metrics.ruleTableSize.count == 201)  // both generations' rules while the new one is built
        metrics.keepRules(of: next)
        #expect(metrics.ruleTableSize.count == 101)
    }
}

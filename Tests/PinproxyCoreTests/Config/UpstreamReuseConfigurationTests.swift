import Testing
@testable import PinproxyCore

@Suite("upstream_reuse")
struct UpstreamReuseConfigurationTests {
    static func parse(_ text: String) throws -> Configuration {
        try ConfigurationLoader.parse(text: text, source: "<t>", environment: [:], cpuCount: 1).0
    }

    @Test("defaults: 512 idle connections per host and loop, sessions resumed")
    func defaults() throws {
        let configuration = try Self.parse("{}")
        #expect(configuration.upstreamReuse == UpstreamReuse())
        #expect(configuration.upstreamReuse.idlePerHost == 512)
        #expect(configuration.upstreamReuse.tlsSessions)
    }

    @Test("both keys are read; 0 turns pooling off")
    func read() throws {
        let configuration = try Self.parse(#"{ "upstream_reuse": { "idle_per_host": 0, "tls_sessions": false } }"#)
        #expect(configuration.upstreamReuse.idlePerHost == 0)
        #expect(!configuration.upstreamReuse.tlsSessions)
        let partial = try Self.parse(#"{ "upstream_reuse": { "idle_per_host": 64 } }"#)
        #expect(partial.upstreamReuse.idlePerHost == 64)
        #expect(partial.upstreamReuse.tlsSessions)
    }

    @Test("wrong types, ranges and typos are refused with their path", arguments: [
        (#"{ "upstream_reuse": { "idle_per_host": -1 } }"#, "$.upstream_reuse.idle_per_host"),
        (#"{ "upstream_reuse": { "idle_per_host": 100001 } }"#, "$.upstream_reuse.idle_per_host"),
        (#"{ "upstream_reuse": { "idle_per_host": "8" } }"#, "$.upstream_reuse.idle_per_host"),
        (#"{ "upstream_reuse": { "tls_sessions": "no" } }"#, "$.upstream_reuse.tls_sessions"),
        (#"{ "upstream_reuse": { "tls_session": false } }"#, "$.upstream_reuse.tls_session"),
        (#"{ "upstream_reuse": true }"#, "$.upstream_reuse"),
    ])
    func refused(text: String, path: String) {
        do {
            _ = try ConfigurationLoader.parse(text: text, source: "<t>", environment: [:], cpuCount: 1)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.problems.contains { $0.path == path }, "\(error)")
        }
    }
}

import Testing
@testable import PinproxyCore

@Suite("report_uri")
struct ReportURIConfigurationTests {
    @Test("valid collectors are accepted", arguments: [
        "http://127.0.0.1:9900/pin-reports", "http://localhost/r", "http://[::1]:80/", "http://collector.example",
    ])
    func accepted(uri: String) throws {
        let text = #"{ "hosts": { "a.example": { "policy": "default", "report_uri": "\#(uri)" } } }"#
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<t>", environment: [:], cpuCount: 1)
        #expect(configuration.policies.rules.first?.policy.reportURI == uri)
    }

    @Test("anything but an http:// URL with a host is refused with its JSON path", arguments: [
        "https://collector.example/r", "ftp://x", "http://", "http://user@host/", "collector.example", "http://host:notaport/",
    ])
    func refused(uri: String) {
        let text = #"{ "hosts": { "a.example": { "policy": "default", "report_uri": "\#(uri)" } } }"#
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse(text: text, source: "<t>", environment: [:], cpuCount: 1)
        }
        do {
            _ = try ConfigurationLoader.parse(text: text, source: "<t>", environment: [:], cpuCount: 1)
        } catch {
            #expect("\(error)".contains(#"$.hosts["a.example"].report_uri"#))
        }
    }
}

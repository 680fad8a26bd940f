import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

extension TrustPolicyEndToEndTests {
    /// SPEC §2.1 report-only (`enforce: false`): what would have been blocked
    /// is relayed, and reported as a `reported` event.
    @Suite("enforce false: violations relayed and reported")
    struct ReportOnly {
        @Test("a MITM the pin would block is relayed and reported when enforce is false")
        func mitmReportOnly() throws {
            let (_, scenario) = try TrustPolicyEndToEndTests.mitm(enforce: false)
            let result = try scenario.get("/bytes/100")
            #expect(result.status == 200)
            #expect(result.body == Data((0..<100).map { UInt8($0) }))
            #expect(result.header("proxy-status") == nil)
            E2EVerdict.expectEvent(action: .reported, reason: .pinMismatch, rule: "api.example.com",
                                   policy: .pinPublicKeys, proxy: scenario.proxy)
        }

        @Test("report-only covers chain failures too: an untrusted server is relayed and reported as chain_untrusted")
        func chainFailureReportOnly() throws {
            let served = try TestPKI.chain(rootName: "Unknown Root CA")
            let trusted = try TestPKI.chain(rootName: "Trusted Root CA")
            let scenario = try E2EScenario(chain: served, trusting: [trusted.root.certificate],
                                           config: #""hosts": { "api.example.com": { "policy": "default", "enforce": false } },"#)
            let result = try scenario.get("/bytes/7")
            #expect(result.status == 200)
            #expect(result.body == Data((0..<7).map { UInt8($0) }))
            E2EVerdict.expectEvent(action: .reported, reason: .chainUntrusted, rule: "api.example.com",
                                   policy: .default, proxy: scenario.proxy)
        }
    }
}

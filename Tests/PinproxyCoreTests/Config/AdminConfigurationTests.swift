import Foundation
import Testing
@testable import PinproxyCore

@Suite("admin (SPEC §6): a loopback listener of its own, refused otherwise")
struct AdminConfigurationTests {
    static let listeners = #""listeners": [{ "listen": "127.0.0.1:8080", "mode": "forward" }],"#

    @Test("a loopback address is taken; absent means no admin listener")
    func accepted() throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let (configuration, _) = try fixture.parse("{ \(Self.listeners) \"admin\": { \"listen\": \"127.0.0.1:9901\" } }")
        #expect(configuration.admin == AdminListener(address: Endpoint(host: HostName("127.0.0.1")!, port: 9901)))
        #expect(try fixture.parse("{ \(Self.listeners) }").0.admin == nil)
        let remote = try fixture.parse("{ \(Self.listeners) \"admin\": { \"listen\": \"10.0.0.1:9901\", \"allow_remote\": true } }")
        #expect(remote.0.admin?.allowRemote == true)
    }

    @Test("each mistake is one problem at its path",
          arguments: [
            (#"{ "listen": "10.0.0.1:9901" }"#, "$.admin.listen", "is not loopback"),
            (#"{ "listen": "127.0.0.1:8080" }"#, "$.admin.listen", "is already a proxy listener"),
            (#"{ "listen": "admin.example.com:9901" }"#, "$.admin.listen", "must be an IP address or localhost"),
            (#"{ }"#, "$.admin", "has no \"listen\""),
            (#"{ "listen": "127.0.0.1:9901", "lisen": 1 }"#, "$.admin.lisen", ""),
            (#""127.0.0.1:9901""#, "$.admin", ""),
          ])
    func refused(admin: String, path: String, message: String) throws {
        let fixture = try ConfigurationFixture()
        defer { fixture.remove() }
        let problems = fixture.problems("{ \(Self.listeners) \"admin\": \(admin) }")
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.path == path)
        #expect(message.isEmpty || problems.first?.message.contains(message) == true, "\(problems)")
    }
}

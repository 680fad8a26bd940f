import Foundation
import Testing
@testable import PinproxyRuntime

/// SPEC §3.1 with §2.1: a CONNECT to a host whose rule is `custom` is
/// intercepted, and the command decides on the real server before the
/// client gets its `200`; a rejected server gets no request, and the client
/// no TLS at all. Two loops (the `ConnectBed`).
@Suite("custom policy: CONNECT interception", .serialized)
struct CustomPolicyInterceptionEndToEndTests {
    /// The bed with api.example.com's rule replaced by `checker`'s.
    static func bed(_ body: String) throws -> (ConnectBed, CustomChecker) {
        var made: CustomChecker?
        let bed = try ConnectBed { world in
            let checker = try CustomChecker(in: world.directory, body: body)
            made = checker
            let listed = #""api.example.com": { "policy": "default" }"#
            precondition(world.configuration.extra.contains(listed), "the ConnectBed's api.example.com rule changed")
            world.configuration.extra = world.configuration.extra.replacingOccurrences(of: listed, with: checker.rule())
        }
        return (bed, made!)
    }

    @Test("an accepted server: the command ran once with the server's chain, before the 200, and the requests inside are answered")
    func accepted() throws {
        let (bed, checker) = try Self.bed(#"cat > "$STATE/stdin-$$"; exit 0"#)
        let outcome = try bed.client(["--request", "GET /inside HTTP/1.1\nHost: api.example.com\n\n"])
        #expect(outcome.connectStatus == 200, "\(outcome)")
        #expect(outcome.responses.map(\.status) == [200], "\(outcome)")
        #expect(bed.originRequests().map(\.target) == ["/inside"])
        let runs = checker.callStarts
        try #require(runs.count == 1)
        #expect(checker.environment(of: runs[0].pid)["PINPROXY_HOST"] == "api.example.com")
        #expect(checker.input(of: runs[0].pid).hasPrefix("-----BEGIN CERTIFICATE-----"))
    }

    @Test("a rejected server: the CONNECT gets 502 with custom_rejected, the origin parses no request, and the event says connect")
    func rejected() throws {
        let (bed, _) = try Self.bed(#"cat >/dev/null; echo 'not ours'; exit 1"#)
        let outcome = try bed.client(["--request", "GET /never HTTP/1.1\nHost: api.example.com\n\n"])
        #expect(outcome.connectStatus == 502, "\(outcome)")
        #expect(outcome.handshake != "ok")
        #expect(bed.originRequests().isEmpty)
        let events = bed.proxy.sink.events
        #expect(events.map(\.reason) == [.customRejected])
        #expect(events.first?.detail == "not ours")
        #expect(events.first?.clientTransport == .connect)
    }
}

import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The checks every end-to-end failure test makes, in one place so each test
/// states only its scenario: the exact answer of SPEC §3, the violation event
/// of SPEC §4 both as recorded and as written to the log file, and the
/// upstream's own account of what it received.
enum E2EVerdict {
    /// `Proxy-Status` as SPEC §3 (RFC 9209) writes it.
    static func proxyStatus(_ error: String, details: String? = nil) -> String {
        "pinproxy; error=\(error)" + (details.map { "; details=\"\($0)\"" } ?? "")
    }

    /// A policy block: 502 with `tls_certificate_error` naming `reason`, and the
    /// one `blocked` event (read from the log file without waiting: SPEC §4
    /// makes it durable before the 502 is sent).
    static func expectBlocked(_ result: Curl.Result, reason: ViolationReason, rule: String, policy: PolicyKind,
                              proxy: ProxyUnderTest, host: String = "api.example.com",
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 502, sourceLocation: sourceLocation)
        #expect(result.header("proxy-status") == proxyStatus("tls_certificate_error", details: reason.rawValue),
                sourceLocation: sourceLocation)
        expectEvent(action: .blocked, reason: reason, rule: rule, policy: policy, proxy: proxy, host: host,
                    sourceLocation: sourceLocation)
    }

    /// A proxy error that is not a policy verdict (DNS, TCP, TLS protocol,
    /// timeouts, deny): exact status and `Proxy-Status`, and no violation event.
    static func expectFailure(_ result: Curl.Result, status: Int, error: String, proxy: ProxyUnderTest,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status, sourceLocation: sourceLocation)
        #expect(result.header("proxy-status") == proxyStatus(error), sourceLocation: sourceLocation)
        expectNoEvent(proxy: proxy, sourceLocation: sourceLocation)
    }

    /// Exactly one violation, in the recording sink and as the log file's only line.
    static func expectEvent(action: ViolationEvent.Action, reason: ViolationReason, rule: String, policy: PolicyKind,
                            proxy: ProxyUnderTest, host: String = "api.example.com",
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let events = proxy.sink.events
        #expect(events.count == 1, "recorded events: \(events.map(\.reason))", sourceLocation: sourceLocation)
        if let event = events.first {
            #expect(event.action == action, sourceLocation: sourceLocation)
            #expect(event.reason == reason, sourceLocation: sourceLocation)
            #expect(event.host == host, sourceLocation: sourceLocation)
            #expect(event.port == 443, sourceLocation: sourceLocation)
            #expect(event.rule == rule, sourceLocation: sourceLocation)
            #expect(event.policy == policy, sourceLocation: sourceLocation)
            #expect(event.enforce == (action == .blocked), sourceLocation: sourceLocation)
        }
        // SPEC §4 makes a block's line durable before the 502, so it is read at
        // once; a reported event's line has no such deadline (the response is
        // relayed meanwhile), so it is waited for.
        let lines = action == .blocked ? proxy.logLines() : eventually(timeout: 5, proxy.logLines, until: { !$0.isEmpty })
        #expect(lines.count == 1, "violation log lines: \(lines.count)", sourceLocation: sourceLocation)
        if let line = lines.first {
            #expect(line["event"] as? String == "pin_violation", sourceLocation: sourceLocation)
            #expect(line["action"] as? String == action.rawValue, sourceLocation: sourceLocation)
            #expect(line["reason"] as? String == reason.rawValue, sourceLocation: sourceLocation)
            #expect(line["host"] as? String == host, sourceLocation: sourceLocation)
            #expect(line["port"] as? Int == 443, sourceLocation: sourceLocation)
            #expect(line["rule"] as? String == rule, sourceLocation: sourceLocation)
            #expect(line["policy"] as? String == policy.rawValue, sourceLocation: sourceLocation)
            #expect(line["enforce"] as? Bool == (action == .blocked), sourceLocation: sourceLocation)
            #expect((line["served_chain"] as? [Any])?.isEmpty == false, sourceLocation: sourceLocation)
        }
    }

    /// Neither the sink nor the log file saw a violation.
    static func expectNoEvent(proxy: ProxyUnderTest, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(proxy.sink.events.isEmpty, "unexpected events: \(proxy.sink.events.map(\.reason))",
                sourceLocation: sourceLocation)
        #expect(proxy.logLines().isEmpty, sourceLocation: sourceLocation)
    }

    /// The rejected server's own log: exactly `count` connections, none of which
    /// carried an application byte or a request.
    static func expectNothingRelayed(_ records: [TestUpstream.ConnectionRecord], count: Int = 1,
                                     sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(records.count == count, "upstream connections: \(records.count)", sourceLocation: sourceLocation)
        #expect(records.map(\.app_bytes) == Array(repeating: 0, count: records.count), sourceLocation: sourceLocation)
        #expect(records.map(\.requests) == Array(repeating: 0, count: records.count), sourceLocation: sourceLocation)
    }
}

import Foundation
import Testing
@testable import PinproxyCore

@Suite("Access log line (SPEC §6)")
struct AccessLogEntryTests {
    @Test("the line is exactly this shape, byte for byte, with the duration in whole milliseconds")
    func goldenLine() {
        let entry = AccessLogEntry(time: Date(timeIntervalSince1970: 1_796_040_000.123), clientAddress: "127.0.0.1:50122",
                                   listener: "127.0.0.1:8080", transport: .intercepted, method: "POST", host: "api.example.com",
                                   port: 443, rule: "*.example.com", status: 201, bytesUp: 1000, bytesDown: 17,
                                   duration: .milliseconds(1234) + .microseconds(999), upstream: .resumed)
        let expected = #"{"time":"2026-11-30T12:00:00.123Z","client_address":"127.0.0.1:50122","listener":"127.0.0.1:8080","#
            + #""client_transport":"intercepted","method":"POST","host":"api.example.com","port":443,"rule":"*.example.com","#
            + #""status":201,"bytes_up":1000,"bytes_down":17,"duration_ms":1234,"upstream":"resumed"}"# + "\n"
        #expect(String(decoding: entry.jsonLine(), as: UTF8.self) == expected)
    }
}

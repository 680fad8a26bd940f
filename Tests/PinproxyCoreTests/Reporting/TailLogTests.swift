import Foundation
import Testing
@testable import PinproxyCore

/// `pinproxy tail`'s pure parts: reading, filtering and formatting violation
/// log lines (SPEC §4), on crafted lines, no files.
@Suite struct TailLogTests {
    static func violation(time: String = "2026-11-30T17:43:44.123Z", action: String = "blocked",
                          reason: String = "pin_mismatch", host: String = "api.example.com", port: Int = 443) -> String {
        #"{"time":"\#(time)","event":"pin_violation","action":"\#(action)","reason":"\#(reason)","host":"\#(host)","port":\#(port),"peer_address":"127.0.0.1:9443","rule":"api.example.com","policy":"pin-public-keys","enforce":true,"include_subdomains":false,"known_pins":["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="],"served_chain":[{"subject":"CN=api.example.com","issuer":"CN=Evil CA","not_before":"2026-11-01T00:00:00Z","not_after":"2027-11-01T00:00:00Z","spki_sha256":"sha256/Ab3DeF9hIjKlMnOpQrStUvWxYz0123456789+/abcde=","cert_sha256":"00"}],"served_certificate_chain":[],"client_address":"127.0.0.1:50122","listener":"127.0.0.1:8080","config_generation":3,"request":{"method":"GET","target":"/v1/users"},"detail":"no certificate in the served chain matches a pinned public key"}"#
    }

    static let summary = #"{"time":"2026-11-30T17:45:00.000Z","event":"pin_violation_summary","action":"reported","reason":"hostname_mismatch","host":"a.cdn.example.com","port":8443,"rule":"*.cdn.example.com","count":37,"first_time":"2026-11-30T17:44:00.000Z","last_time":"2026-11-30T17:44:59.500Z","config_generation":3}"#

    @Test("each kind of line formats as SPEC §4's readable line", arguments: [
        (violation(), "2026-11-30T17:43:44Z BLOCKED  api.example.com:443  pin_mismatch  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil CA)"),
        (violation(action: "reported", reason: "chain_untrusted", port: 8443),
         "2026-11-30T17:43:44Z REPORTED api.example.com:8443  chain_untrusted  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil CA)"),
        (summary, "2026-11-30T17:45:00Z REPORTED a.cdn.example.com:8443  hostname_mismatch  ×37 more (first 2026-11-30T17:44:00Z last 2026-11-30T17:44:59Z)"),
        (violation(host: "::1"), "2026-11-30T17:43:44Z BLOCKED  [::1]:443  pin_mismatch  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil CA)"),
    ])
    func formatsLines(line: String, expected: String) throws {
        let record = try ViolationLogRecord.parse(line)
        #expect(TailFormatter(usesColour: false).line(for: record) == expected)
        #expect(record.rawLine == line)
    }

    // Found by FuzzViolationLogLine: subject and issuer come from the served
    // certificate, so a man in the middle chooses them; printed raw, an ESC
    // sequence would rewrite the operator's terminal and a newline would
    // forge a second, innocent-looking line.
    @Test("control characters from the log are shown as escapes, never sent to the terminal")
    func controlsAreInert() throws {
        let line = Self.violation(host: #"evil\u001b[2J"#)
            .replacingOccurrences(of: "CN=Evil CA", with: #"CN=Evil\n2026-11-30T17:43:44Z REPORTED ok\u009b\u2028"#)
        let record = try ViolationLogRecord.parse(line)
        let shown = TailFormatter(usesColour: false).line(for: record)
        #expect(shown == #"2026-11-30T17:43:44Z BLOCKED  evil\u{1B}[2J:443  pin_mismatch  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil\u{A}2026-11-30T17:43:44Z REPORTED ok\u{9B}\u{2028})"#)
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("colour wraps only the action, and keeps the columns")
    func colour() throws {
        let record = try ViolationLogRecord.parse(Self.violation())
        #expect(TailFormatter(usesColour: true).line(for: record)
                == "2026-11-30T17:43:44Z \u{1B}[1;31mBLOCKED\u{1B}[0m  api.example.com:443  pin_mismatch  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil CA)")
    }

    @Test("malformed lines are refused with the first problem", arguments: [
        ("not json", "not a JSON object"),
        ("[1,2]", "not a JSON object"),
        (#"{"event":"pin_violation"}"#, "no \"action\""),
        (#"{"time":"2026-11-30T17:43:44Z","event":"pin_violation","action":"ignored","reason":"x","host":"h","port":1,"rule":"r"}"#, "\"action\" is neither blocked nor reported"),
        (#"{"time":"yesterday","event":"pin_violation","action":"blocked","reason":"x","host":"h","port":1,"rule":"r"}"#, "\"time\" is not an RFC 3339 time"),
        (#"{"time":"2026-11-30T17:43:44Z","event":"hello","action":"blocked","reason":"x","host":"h","port":1,"rule":"r"}"#, "unknown event \"hello\""),
        (#"{"time":"2026-11-30T17:43:44Z","event":"pin_violation","action":"blocked","reason":"x","host":"h","port":"443","rule":"r"}"#, "\"port\" has the wrong type"),
        (#"{"time":"2026-11-30T17:43:44Z","event":"pin_violation_summary","action":"blocked","reason":"x","host":"h","port":1,"rule":"r","first_time":"2026-11-30T17:43:44Z","last_time":"2026-11-30T17:43:44Z"}"#, "no \"count\""),
    ])
    func malformed(line: String, problem: String) {
        #expect(throws: ViolationLogRecord.Malformed(problem: problem)) { try ViolationLogRecord.parse(line) }
    }

    @Test("--host takes config-key patterns, without include_subdomains", arguments: [
        ("api.example.com", "api.example.com", true),
        ("API.Example.com.", "api.example.com", true),
        ("api.example.com", "x.api.example.com", false),
        ("*.example.com", "api.example.com", true),
        ("*.example.com", "a.b.example.com", false),
        ("*.example.com", "example.com", false),
        ("**.example.com", "example.com", true),
        ("**.example.com", "a.b.example.com", true),
        ("**.example.com", "notexample.com", false),
        ("127.0.0.1", "127.0.0.1", true),
    ])
    func hostFilter(pattern: String, host: String, included: Bool) throws {
        let record = try ViolationLogRecord.parse(Self.violation(host: host))
        let filter = TailFilter(host: HostPattern(pattern))
        #expect(filter.host != nil)
        #expect(filter.includes(record) == included)
    }

    @Test("--reason keeps only that reason")
    func reasonFilter() throws {
        let mismatch = try ViolationLogRecord.parse(Self.violation())
        let untrusted = try ViolationLogRecord.parse(Self.violation(reason: "chain_untrusted"))
        let filter = TailFilter(reason: .chainUntrusted)
        #expect([mismatch, untrusted].filter(filter.includes).map(\.reason) == ["chain_untrusted"])
    }

    @Test("--since takes a duration before now or an RFC 3339 time", arguments: [
        ("10m", 1_800_000_000.0 - 600),
        ("90s", 1_800_000_000.0 - 90),
        ("2h", 1_800_000_000.0 - 7200),
        ("2026-11-30T17:43:44Z", 1_796_060_624.0),
        ("2026-11-30T18:43:44.5+01:00", 1_796_060_624.5),
        ("2026-11-30t17:43:44z", 1_796_060_624.0),
    ])
    func since(text: String, expected: Double) throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try #require(TailFilter.since(text, now: now)).timeIntervalSince1970 == expected)
    }

    @Test("--since refuses what is neither", arguments: ["10", "yesterday", "2026-11-30", "2026-11-30T17:43:44", "0m", "2026-13-01T00:00:00Z"])
    func sinceRefused(text: String) {
        #expect(TailFilter.since(text, now: Date()) == nil)
    }

    @Test("--since hides older events but keeps a summary whose window reaches past it")
    func sinceFilter() throws {
        let filter = TailFilter(since: RFC3339TimestampParser.parse("2026-11-30T17:44:30Z"))
        #expect(filter.since != nil)
        let older = try ViolationLogRecord.parse(Self.violation())
        let newer = try ViolationLogRecord.parse(Self.violation(time: "2026-11-30T17:44:30.000Z"))
        let summary = try ViolationLogRecord.parse(Self.summary)
        #expect([older, newer, summary].map(filter.includes) == [false, true, true])
    }

    @Test("the parser reads back every timestamp the daemon writes", arguments: [0.0, 1_796_060_624.123, -86_400.5, 253_402_300_799.999, 951_782_400.0])
    func roundTrip(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let parsed = try #require(RFC3339TimestampParser.parse(RFC3339Timestamp.milliseconds(date)))
        #expect(abs(parsed.timeIntervalSince1970 - seconds) < 0.0005)
    }

    @Test("the reader holds a partial line until its newline, and numbers lines per file")
    func reader() {
        var reader = ViolationLogReader()
        #expect(reader.consume(Array("one\ntw".utf8)) == [.init(number: 1, text: "one")])
        #expect(reader.consume(Array("o".utf8)).isEmpty)
        #expect(reader.consume(Array("\r\nthree\n".utf8)) == [.init(number: 2, text: "two"), .init(number: 3, text: "three")])
        #expect(reader.consume(Array("fou".utf8)).isEmpty)
        #expect(reader.finishFile() == [.init(number: 4, text: "fou")])
        #expect(reader.consume(Array("new\n".utf8)) == [.init(number: 1, text: "new")])
    }
}

import Foundation
import Testing

/// `pinproxy tail` run as a binary on crafted logs (SPEC §4): exact lines
/// (stdout is a pipe, so no colour), filters, and `-f` across rotations.
@Suite struct TailCommandTests {
    static func violation(_ index: Int, action: String = "blocked", host: String = "api.example.com") -> String {
        let second = String(format: "%02d", index % 60)
        return #"{"time":"2026-11-30T17:43:\#(second).123Z","event":"pin_violation","action":"\#(action)","reason":"pin_mismatch","host":"\#(host)","port":443,"peer_address":"127.0.0.1:9443","rule":"api.example.com","policy":"pin-public-keys","enforce":true,"include_subdomains":false,"known_pins":[],"served_chain":[{"subject":"CN=api.example.com","issuer":"CN=Evil CA","not_before":"2026-11-01T00:00:00Z","not_after":"2027-11-01T00:00:00Z","spki_sha256":"sha256/Ab3DeF9hIjKlMnOpQrStUvWxYz0123456789+/abcde=","cert_sha256":"00"}],"served_certificate_chain":[],"client_address":"127.0.0.1:50122","listener":"127.0.0.1:8080","config_generation":1,"request":{"method":"GET","target":"/\#(index)"},"detail":"event \#(index)"}"#
    }

    static func readable(_ index: Int, action: String = "BLOCKED ", host: String = "api.example.com") -> String {
        "2026-11-30T17:43:\(String(format: "%02d", index % 60))Z \(action) \(host):443  pin_mismatch  served sha256/Ab3DeF9hIj… (CN=api.example.com ← CN=Evil CA)"
    }

    static let summary = #"{"time":"2026-11-30T17:45:00.000Z","event":"pin_violation_summary","action":"blocked","reason":"pin_mismatch","host":"api.example.com","port":443,"rule":"api.example.com","count":37,"first_time":"2026-11-30T17:44:00.000Z","last_time":"2026-11-30T17:44:59.000Z","config_generation":1}"#

    @Test("one readable line per event; malformed lines named on stderr and skipped; the partial last line held")
    func readable() throws {
        let directory = try TemporaryDirectory()
        let log = try directory.write([Self.violation(1), "{oops", Self.violation(2, action: "reported", host: "a.cdn.example.com"),
                                       Self.summary].joined(separator: "\n") + "\n" + #"{"time":"2026-11"#, to: "violations.jsonl")
        let result = try PinproxyBinary.run(["tail", log])
        #expect(result.status == 0)
        #expect(result.outputLines == [
            Self.readable(1),
            Self.readable(2, action: "REPORTED", host: "a.cdn.example.com"),
            "2026-11-30T17:45:00Z BLOCKED  api.example.com:443  pin_mismatch  ×37 more (first 2026-11-30T17:44:00Z last 2026-11-30T17:44:59Z)",
        ])
        #expect(result.errorOutput == "tail: \(log):2: malformed line skipped (not a JSON object)\n")
    }

    @Test("-n, --json, --host and --reason select, like tail(1) after grep")
    func filters() throws {
        let directory = try TemporaryDirectory()
        let lines = (1...15).map { Self.violation($0, host: $0.isMultiple(of: 3) ? "x.cdn.example.com" : "api.example.com") }
        let log = try directory.write(lines.joined(separator: "\n") + "\n", to: "violations.jsonl")
        #expect(try PinproxyBinary.run(["tail", log]).outputLines.count == 10)
        #expect(try PinproxyBinary.run(["tail", "-n", "2", "--json", log]).outputLines == [lines[13], lines[14]])
        #expect(try PinproxyBinary.run(["tail", "-n", "0", log]).outputLines == [])
        #expect(try PinproxyBinary.run(["tail", "--host", "*.cdn.example.com", "-n", "100", log]).outputLines
                == [3, 6, 9, 12, 15].map { Self.readable($0, host: "x.cdn.example.com") })
        #expect(try PinproxyBinary.run(["tail", "--host", "cdn.example.com", log]).outputLines == [])
        #expect(try PinproxyBinary.run(["tail", "--reason", "chain_untrusted", log]).outputLines == [])
        #expect(try PinproxyBinary.run(["tail", "--since", "2026-11-30T17:43:14Z", log]).outputLines == [Self.readable(14), Self.readable(15, host: "x.cdn.example.com")])
        let bad = try PinproxyBinary.run(["tail", "--reason", "pin_mismatched", log])
        #expect(bad.status == 2)
        #expect(try PinproxyBinary.run(["tail", directory.path + "/absent.jsonl"]).status == 3)
    }

    @Test("tail -f prints every event exactly once across two rotations by rename, and holds partial lines")
    func followAcrossRotation() throws {
        let directory = try TemporaryDirectory()
        let log = directory.file("violations.jsonl")
        try (Self.violation(0) + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        let process = try PinproxyBinary.start(["tail", "-f", "-n", "5", "--json", log])
        var written = [Self.violation(0)]
        func printed() -> [String] { process.stdoutText.split(separator: "\n").map(String.init) }
        func append(_ text: String) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            handle.seekToEndOfFile()
            handle.write(Data(text.utf8))
            try handle.close()
        }
        func event(_ index: Int) throws {
            written.append(Self.violation(index))
            try append(Self.violation(index) + "\n")
        }
        // Following once the existing line is out.
        #expect(eventually(timeout: 5) { printed() == written })
        try event(1)
        // The pauses below are deliberate pacing against the 200 ms poll of
        // `tail -f`: each puts a write, rename or re-creation on its own side
        // of a poll. A line written in two pieces, the second after a poll.
        let split = Self.violation(2)
        written.append(split)
        try append(String(split.prefix(40)))
        usleep(450_000)
        try append(String(split.dropFirst(40)) + "\n")
        for rotation in 1...2 {
            try event(rotation * 10)
            try FileManager.default.moveItem(atPath: log, toPath: log + ".\(rotation)")
            // The writer has not reopened yet: a late line lands in the renamed file.
            let late = try FileHandle(forWritingTo: URL(fileURLWithPath: log + ".\(rotation)"))
            late.seekToEndOfFile()
            late.write(Data((Self.violation(rotation * 10 + 1) + "\n").utf8))
            try late.close()
            written.append(Self.violation(rotation * 10 + 1))
            usleep(100_000)
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            try event(rotation * 10 + 2)
            usleep(400_000)
            try event(rotation * 10 + 3)
            usleep(300_000)
        }
        _ = eventually(timeout: 5, interval: 0.1) { printed().count >= written.count }
        // Deliberate: a quiet time of one more poll and a half, in which a
        // duplicate, if one were (wrongly) printed, would arrive.
        usleep(300_000)
        let lines = printed()
        #expect(lines.sorted() == written.sorted())
        #expect(lines.count == written.count)
        #expect(Set(lines).count == lines.count)
        #expect(process.stderrText == "")
    }
}

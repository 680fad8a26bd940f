import Testing
@testable import PinproxyCore

/// SPEC §2.1: exit 1's first line of output becomes the event's `detail`:
/// at most 200 bytes, control characters escaped; and the verdict's reasons.
@Suite("custom verdicts")
struct CustomVerdictTests {
    @Test("the first line: up to LF, CR dropped, at most 200 bytes of what was written", arguments: [
        (Array("unknown serial\r\nsecond\n".utf8), "unknown serial"),
        (Array("no newline".utf8), "no newline"),
        (Array("\n".utf8), ""),
        (Array(repeating: UInt8(ascii: "a"), count: 300), String(repeating: "a", count: 200)),
    ])
    func firstLine(_ output: [UInt8], _ line: String) {
        #expect(CustomVerdict.firstLine(of: output) == line)
    }

    @Test("control characters, bidi overrides and bytes that are not UTF-8 are escaped as \\xHH; other text is kept", arguments: [
        (Array("a\u{1B}[31mb\tc\u{7F}".utf8), "a\\x1b[31mb\\x09c\\x7f"),
        ([0x61, 0xFF, 0xC0, 0x80, 0x62], "a\\xff\\xc0\\x80b"),
        (Array("caf\u{E9} \u{202E}evil".utf8), "caf\u{E9} \\xe2\\x80\\xaeevil"),
        (Array("\u{1F512} locked".utf8), "\u{1F512} locked"),
        ([0x61, 0x00, 0x62], "a\\x00b"),
    ])
    func escaped(_ output: [UInt8], _ line: String) {
        #expect(CustomVerdict.firstLine(of: output) == line)
    }

    @Test("exit 0 trusts; exit 1 is custom_rejected with its line; anything else custom_failed")
    func evaluation() {
        #expect(CustomVerdict.accepted(output: "ok").evaluation == .trusted)
        #expect(CustomVerdict.rejected(output: "revoked").evaluation == .failed(reason: .customRejected, detail: "revoked"))
        #expect(CustomVerdict.rejected(output: "").evaluation.reason == .customRejected)
        #expect(CustomVerdict.failed(detail: "timed out").evaluation == .failed(reason: .customFailed, detail: "timed out"))
        #expect(CustomVerdict.accepted(output: "").isDefinitive && CustomVerdict.rejected(output: "").isDefinitive)
        #expect(!CustomVerdict.failed(detail: "x").isDefinitive)
    }
}

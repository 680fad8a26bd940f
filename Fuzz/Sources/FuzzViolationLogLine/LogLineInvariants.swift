import Foundation
import FuzzSupport
import PinproxyCore

enum LogLineInvariants {
    /// Log bytes read in two pieces (split where the input's last byte says),
    /// then the file ends. The reader must hand out the same lines as a
    /// one-shot read, numbered 1…n, one per newline plus an unterminated tail;
    /// no line holds a newline. Every line either parses or is refused with a
    /// reason; a parsed record keeps the line as its raw text, and its readable
    /// form is one terminal line with no control characters of its own, so a
    /// hostile certificate subject cannot move the operator's cursor.
    static func checkLogBytes(_ input: FuzzInput) {
        let bytes = input.bytes
        let split = input.splitPoint
        var pieces = ViolationLogReader()
        var lines = pieces.consume(bytes[..<split])
        Invariant.check(pieces.pending.count <= split, "pending longer than what was read")
        lines += pieces.consume(bytes[split...])
        lines += pieces.finishFile()
        Invariant.check(pieces.pending.isEmpty && pieces.lineCount == 0, "finishFile left state behind")

        var whole = ViolationLogReader()
        let once = whole.consume(bytes) + whole.finishFile()
        Invariant.check(lines == once, "split at \(split) changed the lines")

        let newlines = bytes.filter { $0 == UInt8(ascii: "\n") }.count
        let tail = bytes.last.map { $0 != UInt8(ascii: "\n") } ?? false
        Invariant.check(lines.count == newlines + (tail ? 1 : 0), "\(lines.count) lines for \(newlines) newlines")
        for (index, line) in lines.enumerated() {
            Invariant.check(line.number == index + 1, "line \(index) numbered \(line.number)")
            Invariant.check(!line.text.contains("\n"), "line \(line.number) holds a newline")
            checkParse(line.text)
        }
    }

    static func checkParse(_ text: String) {
        let record: ViolationLogRecord
        do {
            record = try ViolationLogRecord.parse(text)
        } catch {
            Invariant.check(!error.problem.isEmpty, "refusal without a reason")
            return
        }
        Invariant.check(record.rawLine == text, "raw line differs")
        for colour in [false, true] {
            let shown = TailFormatter(usesColour: colour).line(for: record)
            let own = colour ? shown.replacingOccurrences(of: "\u{1B}[1;31m", with: "")
                .replacingOccurrences(of: "\u{1B}[1;33m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "") : shown
            Invariant.check(!own.unicodeScalars.contains(where: isControl),
                            "tail line holds a control character: \(shown.debugDescription)")
        }
    }

    /// C0, DEL and C1 controls (a terminal acts on all of them), and the
    /// Unicode line and paragraph separators.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// An event whose free-text fields come from the input (separated by NUL)
    /// is written as the daemon writes it; the line must be one line ending in
    /// its only newline with no other raw control character, must parse, and must read back the same fields. The
    /// request target never carries a query into the log.
    static func checkRoundTrip(_ input: FuzzInput) {
        var fields = input.bytes.split(separator: 0, maxSplits: 8, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        while fields.count < 9 { fields.append("") }
        let selector = input.bytes.first ?? 0
        let reason = ViolationReason.allCases[Int(selector) % ViolationReason.allCases.count]
        let action: ViolationEvent.Action = selector & 0x80 == 0 ? .blocked : .reported
        let port = UInt16(truncatingIfNeeded: input.bytes.count &* 257)
        let time = Date(timeIntervalSince1970: 1_700_000_000 + Double(input.bytes.count) * 0.001)
        let certificate = CertificateFacts(der: Array(input.bytes.prefix(64)), spkiSHA256: Array(repeating: selector, count: 32),
                                           certificateSHA256: Array(repeating: 0, count: 32),
                                           subject: fields[3], issuer: fields[4], notBefore: time, notAfter: time)
        let event = ViolationEvent(time: time, action: action, reason: reason, host: fields[0], port: port,
                                   peerAddress: "127.0.0.1:\(port)", rule: fields[1], policy: .pinPublicKeys,
                                   enforce: action == .blocked, includeSubdomains: false, knownPins: [],
                                   servedChain: fields[5].isEmpty ? [] : [certificate], clientAddress: "127.0.0.1:1",
                                   listener: "127.0.0.1:8080", configGeneration: 1, requestMethod: fields[6],
                                   requestTarget: fields[7], detail: fields[2])
        let line = event.jsonLine()
        Invariant.check(line.last == UInt8(ascii: "\n"), "line does not end in a newline")
        Invariant.check(line.filter { $0 == UInt8(ascii: "\n") }.count == 1, "line holds more than one newline")
        Invariant.check(!String(decoding: line.dropLast(), as: UTF8.self).unicodeScalars.contains(where: isControl),
                        "the line holds a raw control character (tail --json prints it as is)")
        var reader = ViolationLogReader()
        let read = reader.consume(line)
        Invariant.check(read.count == 1 && reader.pending.isEmpty, "the reader did not hand out exactly one line")
        let text = read[0].text
        let record: ViolationLogRecord
        do {
            record = try ViolationLogRecord.parse(text)
        } catch {
            Invariant.check(false, "the daemon's own line is refused: \(error.problem): \(text.debugDescription)")
            return
        }
        Invariant.check(record.host == event.host && record.rule == event.rule && record.port == Int(port)
                            && record.reason == reason.rawValue && record.action == action,
                        "fields differ after the round trip: \(text.debugDescription)")
        Invariant.check(abs(record.time.timeIntervalSince(time)) < 0.001, "time differs after the round trip")
        switch record.kind {
        case let .violation(leaf, detail):
            Invariant.check(detail == event.detail, "detail differs after the round trip")
            if event.servedChain.isEmpty {
                Invariant.check(leaf == nil, "a leaf appeared")
            } else {
                Invariant.check(leaf?.subject == fields[3] && leaf?.issuer == fields[4], "leaf names differ")
            }
        case .summary:
            Invariant.check(false, "a violation read back as a summary")
        }
        Invariant.check(!event.requestTarget.contains("?") && !event.requestTarget.contains("#"),
                        "the target kept a query or fragment")
        checkParse(text)
    }
}

/// What the external command of a `custom` policy answered (SPEC §2.1).
///
/// Only exit status 0 accepts. Every other ending — exit 1, another status,
/// a signal, the timeout, a command that cannot be started — rejects: the
/// check fails closed.
public enum CustomVerdict: Sendable, Hashable {
    /// Exit 0. `output` is the first line of standard output, for `probe`.
    case accepted(output: String)
    /// Exit 1; `output` (its first line of standard output) becomes the event's `detail`.
    case rejected(output: String)
    /// No verdict; `detail` says what happened instead ("exited with status 2", "timed out after 2s", …).
    case failed(detail: String)

    /// The evaluation the verdict stands for.
    public var evaluation: TrustEvaluation {
        switch self {
        case .accepted: .trusted
        case let .rejected(output):
            .failed(reason: .customRejected, detail: output.isEmpty ? "the custom command rejected the chain" : output)
        case let .failed(detail): .failed(reason: .customFailed, detail: detail)
        }
    }

    /// Whether the verdict is the command's own answer (exit 0 or 1), which
    /// may be reused for `cache`; a failure is asked again next time, so that
    /// a checker that crashed once does not block a host for the whole window.
    public var isDefinitive: Bool {
        if case .failed = self { return false }
        return true
    }

    /// The most of a first line kept (SPEC §2.1: ≤ 200 bytes).
    public static let maximumLineBytes = 200

    /// The first line of `output` (up to the first LF, at most 200 bytes; a
    /// CR before the LF dropped), with every control character and every
    /// byte that is not UTF-8 escaped as `\xHH`, so the line is safe on a
    /// terminal and in a log.
    public static func firstLine<Bytes: Collection>(of output: Bytes) -> String where Bytes.Element == UInt8 {
        var line = Array(output.prefix { $0 != 0x0A }.prefix(maximumLineBytes))
        if line.last == 0x0D { line.removeLast() }
        var text = ""
        var index = 0
        while index < line.count {
            let width = Self.scalarWidth(line, at: index)
            if width > 0, let scalar = String(decoding: line[index..<index + width], as: UTF8.self).unicodeScalars.first,
               !scalar.properties.generalCategory.isControl {
                text.unicodeScalars.append(scalar)
                index += width
            } else {
                let byte = line[index]
                text += "\\x" + String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
                index += 1
            }
        }
        return text
    }

    /// The length of the well-formed UTF-8 sequence at `index`, or 0.
    private static func scalarWidth(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let width: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: width = 2
        case 0xE0...0xEF: width = 3
        case 0xF0...0xF4: width = 4
        default: return 0
        }
        guard index + width <= bytes.count else { return 0 }
        let sequence = Array(bytes[index..<index + width])
        // Let the standard library judge overlongs and surrogates.
        var iterator = sequence.makeIterator()
        var decoder = UTF8()
        if case .scalarValue = decoder.decode(&iterator), iterator.next() == nil { return width }
        return 0
    }
}

extension Unicode.GeneralCategory {
    /// Cc (C0, DEL, C1) and the format characters that reorder or hide text
    /// on a terminal (Cf: bidi overrides, zero-width joiners).
    var isControl: Bool { self == .control || self == .format }
}

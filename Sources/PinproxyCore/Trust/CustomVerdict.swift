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
            if let (scalar, width) = Self.scalar(in: line, at: index), !scalar.properties.generalCategory.movesOrHidesText {
                text.unicodeScalars.append(scalar)
                index += width
            } else {
                text += "\\x" + Hex.lowercase(CollectionOfOne(line[index]))
                index += 1
            }
        }
        return text
    }

    /// The well-formed UTF-8 sequence at `index` and its length, or nil.
    private static func scalar(in bytes: [UInt8], at index: Int) -> (Unicode.Scalar, Int)? {
        let width: Int
        switch bytes[index] {
        case 0x00...0x7F: width = 1
        case 0xC2...0xDF: width = 2
        case 0xE0...0xEF: width = 3
        case 0xF0...0xF4: width = 4
        default: return nil
        }
        guard index + width <= bytes.count else { return nil }
        // The standard library judges overlongs and surrogates; all `width` bytes must make one scalar.
        var iterator = bytes[index..<index + width].makeIterator()
        var decoder = UTF8()
        guard case let .scalarValue(scalar) = decoder.decode(&iterator), iterator.next() == nil else { return nil }
        return (scalar, width)
    }
}

extension Unicode.GeneralCategory {
    /// Cc (C0, DEL, C1) and the format characters that reorder or hide text
    /// on a terminal (Cf: bidi overrides, zero-width joiners).
    var movesOrHidesText: Bool { self == .control || self == .format }
}

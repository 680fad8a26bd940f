/// A minimal streaming JSON writer for the violation log: keys are written in
/// the order the caller writes them, strings are escaped by hand (RFC 8259 §7),
/// and no newline ever appears inside the output, so one event is one line.
///
/// Invariant: `bytes` is valid JSON text once every `begin…` has its `end…`.
/// The writer does not check nesting; its only caller is one serialiser.
struct JSONLineWriter {
    private(set) var bytes: [UInt8] = []
    /// One entry per open object or array: whether a value was already written
    /// in it (so the next one needs a comma).
    private var hasValue: [Bool] = []
    /// True between a key and its value: the value needs no comma.
    private var afterKey = false

    init(capacity: Int = 2048) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); hasValue.append(false) }
    mutating func endObject() { hasValue.removeLast(); bytes.append(UInt8(ascii: "}")) }
    mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); hasValue.append(false) }
    mutating func endArray() { hasValue.removeLast(); bytes.append(UInt8(ascii: "]")) }

    /// Writes `"key":`; the next value belongs to it.
    mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ value: String) { separate(); appendQuoted(value) }
    mutating func integer(_ value: Int) { separate(); bytes.append(contentsOf: String(value).utf8) }
    mutating func bool(_ value: Bool) { separate(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    /// Writes the comma before a value or key when its container already has one.
    private mutating func separate() {
        if afterKey { afterKey = false; return }
        guard let last = hasValue.indices.last else { return }
        if hasValue[last] { bytes.append(UInt8(ascii: ",")) }
        hasValue[last] = true
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// RFC 8259 §7: `"` and `\` escaped, control characters U+0000…U+001F as
    /// their two-character escape (`\n`, `\t`, …) or `\u00XX`. Beyond what
    /// RFC 8259 requires, DEL and the C1 controls U+0080…U+009F (a terminal
    /// acts on them, and `pinproxy tail --json` prints lines as written) and
    /// U+2028/U+2029 (line breaks to JavaScript) are escaped too, so a hostile
    /// certificate subject stays inert text. Everything else, including other
    /// non-ASCII UTF-8, is copied unchanged (a Swift `String` is always valid UTF-8).
    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            index += 1
            if byte == 0xC2, index < utf8.count, (0x80...0x9F).contains(utf8[index]) {
                appendUnicodeEscape(UInt16(utf8[index]))
                index += 1
                continue
            }
            if byte == 0xE2, index + 1 < utf8.count, utf8[index] == 0x80, utf8[index + 1] == 0xA8 || utf8[index + 1] == 0xA9 {
                appendUnicodeEscape(utf8[index + 1] == 0xA8 ? 0x2028 : 0x2029)
                index += 2
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20, 0x7F:
                appendUnicodeEscape(UInt16(byte))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `\uXXXX`, lower-case hex.
    private mutating func appendUnicodeEscape(_ unit: UInt16) {
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "u"))
        for shift in stride(from: 12, through: 0, by: -4) {
            bytes.append(Self.hex[Int((unit >> UInt16(shift)) & 0x0F)])
        }
    }
}

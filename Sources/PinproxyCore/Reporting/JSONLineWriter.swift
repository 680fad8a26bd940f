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
    /// their two-character escape (`\n`, `\t`, …) or `\u00XX`; everything else,
    /// including non-ASCII UTF-8, copied unchanged (a Swift `String` is always
    /// valid UTF-8).
    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

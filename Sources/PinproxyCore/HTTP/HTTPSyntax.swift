/// Byte classes and small helpers of the HTTP grammar (RFC 9110 §5.6, RFC 9112).
///
/// Everything works on single bytes so the parsers never allocate per byte.
enum HTTPSyntax {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")

    /// `tchar` (RFC 9110 §5.6.2): the characters of a token.
    static func isTokenChar(_ byte: UInt8) -> Bool {
        // One bit per ASCII byte (the parsers ask this for every byte of
        // every field name): bytes 0-63 in the low word, 64-127 in the high.
        guard byte < 128 else { return false }
        let word = byte < 64 ? tokenBitsLow : tokenBitsHigh
        return word & (1 << UInt64(byte & 63)) != 0
    }

    /// Bits 0-63: "!" "#" "$" "%" "&" "'" "*" "+" "-" "." and digits.
    private static let tokenBitsLow: UInt64 = 0x03FF_6CFA_0000_0000
    /// Bits 64-127: letters, "^" "_" "`" "|" "~".
    private static let tokenBitsHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    /// OWS / BWS / RWS (RFC 9110 §5.6.3): space or horizontal tab.
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// A byte allowed inside a field value (RFC 9110 §5.5): VCHAR, SP, HTAB and
    /// obs-text; every other control character (NUL, CR, LF, DEL, …) is refused.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// The value of a hex digit, or nil.
    static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt64(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// ASCII case-insensitive equality without allocating lower-cased copies.
    static func equalsIgnoringASCIICase(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        // Field-name lookups compare every field against a name; most differ in
        // length, which native strings know without walking their bytes.
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        // Native strings and their substrings are contiguous UTF-8: compare the
        // bytes directly rather than through two generic iterators.
        let contiguous = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<left.count where lowered(left[index]) != lowered(right[index]) { return false }
                return true
            }
        }
        if let contiguous, let result = contiguous { return result }
        return lhs.utf8.elementsEqual(rhs.utf8) { lowered($0) == lowered($1) }
    }

    /// `equalsIgnoringASCIICase` for a name still in its received bytes.
    static func equalsIgnoringASCIICase(bytes: UnsafeRawBufferPointer, _ other: some StringProtocol) -> Bool {
        guard bytes.count == other.utf8.count else { return false }
        return bytes.elementsEqual(other.utf8) { lowered($0) == lowered($1) }
    }

    static func lowered(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
    }

    /// True when every byte of `text` is a tchar and there is at least one.
    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.utf8.isEmpty && text.utf8.allSatisfy(isTokenChar)
    }

    /// The elements of a comma-separated list (RFC 9110 §5.6.1) with OWS trimmed;
    /// empty elements are kept so callers can decide whether they are an error.
    static func listElements(_ value: String) -> [Substring] {
        var elements: [Substring] = []
        forEachListElement(value) { elements.append($0); return true }
        return elements
    }

    /// The elements of `listElements` handed to `body` one by one, without
    /// building an array (the per-request framing checks); stops when `body`
    /// returns false.
    static func forEachListElement(_ value: String, _ body: (Substring) -> Bool) {
        let utf8 = value.utf8
        var start = utf8.startIndex
        while true {
            let end = utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
            guard body(trimmed(value[start..<end])), end < utf8.endIndex else { return }
            start = utf8.index(after: end)
        }
    }

    /// `text` without leading and trailing SP/HTAB.
    static func trimmed(_ text: Substring) -> Substring {
        var result = text
        while let first = result.utf8.first, isWhitespace(first) { result = result.dropFirst() }
        while let last = result.utf8.last, isWhitespace(last) { result = result.dropLast() }
        return result
    }

    /// Decodes `bytes[range]` for the final head values (the only place Strings are made).
    static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}

/// A strict decoder for standard base64 (RFC 4648 §4) with padding.
///
/// Pins are compared as bytes, so two spellings of one digest must not both be
/// accepted: no whitespace, no URL-safe alphabet, length a multiple of four,
/// `=` only as the final one or two characters, and the unused bits of the
/// last group zero (RFC 4648 §3.5: canonical encoding).
enum StrictBase64 {
    /// The decoded bytes, or nil when `text` is not canonical standard base64.
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var values: [UInt32] = []
            var padding = 0
            for byte in input[index..<index + 4] {
                if byte == UInt8(ascii: "=") {
                    padding += 1
                    continue
                }
                guard padding == 0, let value = sextet(byte) else { return nil }
                values.append(value)
            }
            guard padding == 0 || (isLast && padding <= 2) else { return nil }
            let group = values.enumerated().reduce(UInt32(0)) { $0 | $1.element << (18 - 6 * UInt32($1.offset)) }
            let produced = 3 - padding
            // Canonical form: bits beyond the produced bytes must be zero.
            guard group & (0xFFFFFF >> (8 * UInt32(produced))) == 0 || padding == 0 else { return nil }
            for byteIndex in 0..<produced {
                output.append(UInt8(truncatingIfNeeded: group >> (16 - 8 * UInt32(byteIndex))))
            }
            index += 4
        }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a") + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0") + 52)
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}

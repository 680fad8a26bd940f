/// A strict decoder for standard base64 (RFC 4648 §4) with padding.
///
/// Pins are compared as bytes, so two spellings of one digest must not both be
/// accepted: no whitespace, no URL-safe alphabet, length a multiple of four,
/// `=` only as the final one or two characters, and the unused bits of the
/// last group zero (RFC 4648 §3.5: canonical encoding).
enum StrictBase64 {
    /// The decoded bytes, or nil when `text` is not canonical standard base64.
    static func decode(_ text: String) -> [UInt8]? { decode(text[...]) }

    static func decode(_ text: Substring) -> [UInt8]? {
        // Every pin of a configuration comes through here (200,000 for 100,000
        // rules): one pass over the bytes in place, no copies, no per-group arrays.
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode($0) }) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer { decode($0) }
    }

    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var group: UInt32 = 0
            var padding = 0
            for position in 0..<4 {
                let value = sextets[Int(input[index + position])]
                if value == paddingMark {
                    padding += 1
                    continue
                }
                // A sextet after a '=' is refused, so positions of sextets are their places in the group.
                guard padding == 0, value != invalid else { return nil }
                group |= UInt32(value) << (18 - 6 * UInt32(position))
            }
            guard padding == 0 || (isLast && padding <= 2) else { return nil }
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

    private static let invalid: UInt8 = 0xFF
    private static let paddingMark: UInt8 = 0xFE
    /// Each byte's sextet, `paddingMark` for '=', `invalid` for anything else.
    private static let sextets: [UInt8] = (0...255).map { byte in
        if byte == Int(UInt8(ascii: "=")) { return paddingMark }
        return sextet(UInt8(byte)).map { UInt8($0) } ?? invalid
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

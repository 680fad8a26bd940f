/// Scans one chunk-size line, `chunk-size [ chunk-ext ] CRLF` (RFC 9112 §7.1,
/// §7.1.1), byte by byte as a small state machine.
///
/// Extensions are validated against the grammar and then dropped by the
/// caller. Strict: no whitespace before CRLF, at most 16 hex digits, a size
/// that fits in `Int64` (so the runtime can convert it without trapping), and
/// the whole line (CRLF included) within `maxLineBytes`.
enum ChunkSizeLine {
    static let maxLineBytes = 4096

    enum Outcome: Equatable {
        case needMore
        case invalid(String)
        /// `end` is the offset just after the LF.
        case parsed(size: UInt64, end: Int)
    }

    private enum State {
        case size, afterSize, badWhitespace, beforeName, name, afterName, beforeValue
        case tokenValue, quotedValue, quotedPair, lineFeed
    }

    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Outcome {
        let limit = min(bytes.count, start + maxLineBytes)
        var state = State.size
        var size: UInt64 = 0
        var digits = 0
        var index = start
        while index < limit {
            let byte = bytes[index]
            if byte == HTTPSyntax.lf && state != .lineFeed { return .invalid("bare lf in chunk line") }
            switch state {
            case .size:
                if let digit = HTTPSyntax.hexValue(byte) {
                    digits += 1
                    guard digits <= 16 else { return .invalid("chunk size too long") }
                    size = size << 4 | digit
                    guard size <= UInt64(Int64.max) else { return .invalid("chunk size overflow") }
                    index += 1
                    continue
                }
                guard digits > 0 else { return .invalid("invalid chunk size") }
                state = .afterSize
                continue  // re-examine this byte as the start of chunk-ext or CRLF
            case .afterSize:
                switch byte {
                case HTTPSyntax.cr: state = .lineFeed
                case UInt8(ascii: ";"): state = .beforeName
                case HTTPSyntax.space, HTTPSyntax.tab: state = .badWhitespace
                default: return .invalid("invalid chunk size")
                }
            case .badWhitespace:
                // BWS is only allowed before ';' (RFC 9112 §7.1.1), never before CRLF.
                switch byte {
                case HTTPSyntax.space, HTTPSyntax.tab: break
                case UInt8(ascii: ";"): state = .beforeName
                default: return .invalid("invalid chunk extension")
                }
            case .beforeName:
                if HTTPSyntax.isWhitespace(byte) { break }
                guard HTTPSyntax.isTokenChar(byte) else { return .invalid("invalid chunk extension") }
                state = .name
            case .name:
                switch byte {
                case _ where HTTPSyntax.isTokenChar(byte): break
                case HTTPSyntax.space, HTTPSyntax.tab: state = .afterName
                case UInt8(ascii: "="): state = .beforeValue
                case UInt8(ascii: ";"): state = .beforeName
                case HTTPSyntax.cr: state = .lineFeed
                default: return .invalid("invalid chunk extension")
                }
            case .afterName:
                switch byte {
                case HTTPSyntax.space, HTTPSyntax.tab: break
                case UInt8(ascii: "="): state = .beforeValue
                case UInt8(ascii: ";"): state = .beforeName
                default: return .invalid("invalid chunk extension")
                }
            case .beforeValue:
                if HTTPSyntax.isWhitespace(byte) { break }
                if byte == UInt8(ascii: "\"") { state = .quotedValue; break }
                guard HTTPSyntax.isTokenChar(byte) else { return .invalid("invalid chunk extension") }
                state = .tokenValue
            case .tokenValue:
                switch byte {
                case _ where HTTPSyntax.isTokenChar(byte): break
                case HTTPSyntax.space, HTTPSyntax.tab: state = .badWhitespace
                case UInt8(ascii: ";"): state = .beforeName
                case HTTPSyntax.cr: state = .lineFeed
                default: return .invalid("invalid chunk extension")
                }
            case .quotedValue:
                // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (RFC 9110 §5.6.4)
                switch byte {
                case UInt8(ascii: "\""): state = .afterSize
                case UInt8(ascii: "\\"): state = .quotedPair
                case _ where HTTPSyntax.isFieldValueByte(byte): break
                default: return .invalid("invalid chunk extension")
                }
            case .quotedPair:
                guard HTTPSyntax.isFieldValueByte(byte) else { return .invalid("invalid chunk extension") }
                state = .quotedValue
            case .lineFeed:
                guard byte == HTTPSyntax.lf else { return .invalid("bare cr in chunk line") }
                return .parsed(size: size, end: index + 1)
            }
            index += 1
        }
        return limit - start >= maxLineBytes ? .invalid("chunk line too long") : .needMore
    }
}

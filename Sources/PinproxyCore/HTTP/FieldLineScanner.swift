/// Scans a field section (header or trailer lines up to the empty line) byte by
/// byte, recording where names and values are without creating Strings.
///
/// Strict per RFC 9112 §5 and §2.2: a line must end in CRLF (bare CR or bare LF
/// is refused at once, without waiting for more bytes), obs-fold is refused,
/// names are tokens with no whitespace before the colon, and values contain no
/// control characters other than HTAB (obs-text is allowed).
enum FieldLineScanner {
    enum Outcome: Equatable {
        /// The empty line was found; `end` is the offset just after its LF.
        case complete(end: Int)
        /// The bytes up to `limit` are a valid prefix of a field section.
        case needMore
        case invalid(String)
    }

    /// Capacity reserved for the lines of a head: one allocation instead of
    /// the array doubling its way up for an ordinary head.
    static let typicalFieldCount = 24

    enum SectionOutcome {
        /// The section, copied; `end` is the offset just after its empty line.
        case complete(FieldSection, end: Int)
        case needMore
        case invalid(String)
    }

    /// Scans the field section starting at `bytes[start]` (as `scan`) and
    /// copies it, its lines and bytes in arrays from `buffers`; the lines go
    /// back to `buffers` when the section is not complete.
    static func section(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int,
                        buffers: inout HeadBuffers) -> SectionOutcome {
        var lines = buffers.takeLines()
        switch scan(bytes, from: start, limit: limit, into: &lines) {
        case .needMore:
            buffers.giveBack(lines: lines)
            return .needMore
        case .invalid(let reason):
            buffers.giveBack(lines: lines)
            return .invalid(reason)
        case .complete(let end):
            let section = FieldSection(copying: bytes, range: start..<end, lines: lines,
                                       into: buffers.takeBytes(capacity: end - start))
            return .complete(section, end: end)
        }
    }

    /// Scans `bytes[start..<limit]`, appending one line per field line, its
    /// offsets counted from `start` (where the section's copy will begin) and
    /// its name recognised here, while the bytes are at hand.
    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int,
                     into lines: inout [FieldSection.Line]) -> Outcome {
        var index = start
        while true {
            guard index < limit else { return .needMore }
            let first = bytes[index]
            if first == HTTPSyntax.cr {
                guard index + 1 < limit else { return .needMore }
                return bytes[index + 1] == HTTPSyntax.lf ? .complete(end: index + 2) : .invalid("bare cr in field section")
            }
            if first == HTTPSyntax.lf { return .invalid("bare lf in field section") }
            // RFC 9112 §5.2: obs-fold is refused outside message/http.
            if HTTPSyntax.isWhitespace(first) { return .invalid("obs-fold or whitespace at line start") }

            let nameStart = index
            // The colon is not a tchar: the name ends at it or at a byte that is refused.
            while index < limit && HTTPSyntax.isTokenChar(bytes[index]) { index += 1 }
            guard index < limit else { return .needMore }
            guard bytes[index] == HTTPSyntax.colon else {
                // RFC 9112 §5.1: no whitespace between field name and colon.
                return .invalid(HTTPSyntax.isWhitespace(bytes[index]) ? "whitespace before colon" : "invalid field name")
            }
            let nameEnd = index
            guard nameEnd > nameStart else { return .invalid("empty field name") }
            index += 1

            var valueStart = index
            var valueEnd = index
            value: while true {
                // Eight plain value bytes at a time; in a word holding anything
                // else, the scan jumps to the first such byte (CR, HTAB, a control byte).
                while index + 8 <= limit {
                    let stop = FieldValueWord.firstOtherThanPlainByte(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    index += stop
                    if stop < 8 { break }
                }
                guard index < limit else { return .needMore }
                let byte = bytes[index]
                if byte == HTTPSyntax.cr {
                    guard index + 1 < limit else { return .needMore }
                    guard bytes[index + 1] == HTTPSyntax.lf else { return .invalid("bare cr in field value") }
                    valueEnd = index
                    index += 2
                    break value
                }
                if byte == HTTPSyntax.lf { return .invalid("bare lf in field section") }
                guard HTTPSyntax.isFieldValueByte(byte) else { return .invalid("invalid field value") }
                index += 1
            }
            while valueStart < valueEnd, HTTPSyntax.isWhitespace(bytes[valueStart]) { valueStart += 1 }
            while valueEnd > valueStart, HTTPSyntax.isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }
            // "Name: value" CRLF exactly as a writer would put it: relayed by copying the line.
            let verbatim = valueStart == nameEnd + 2 && bytes[nameEnd + 1] == HTTPSyntax.space && valueEnd + 2 == index
            lines.append(FieldSection.Line(name: (nameStart - start)..<(nameEnd - start),
                                           value: (valueStart - start)..<(valueEnd - start),
                                           known: KnownFieldName(bytes: UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameEnd])),
                                           isVerbatim: verbatim))
        }
    }
}

/// Eight bytes of a field value judged at once (SWAR): the common value is
/// printable ASCII or obs-text, with nothing the scanner must stop at.
enum FieldValueWord {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The offset (0-7) of the first byte of `word`, in memory order, that is
    /// below 0x20 (CR, LF, HTAB, NUL, other controls) or is DEL; 8 when there
    /// is none. Exact for the first such byte: a borrow only starts at a byte
    /// that is itself below the bound, so only bytes after it can be misjudged.
    static func firstOtherThanPlainByte(_ word: UInt64) -> Int {
        let little = UInt64(littleEndian: word)
        let belowSpace = (little &- ones &* 0x20) & ~little & highBits
        let flipped = little ^ (ones &* 0x7F)
        let isDelete = (flipped &- ones) & ~flipped & highBits
        return (belowSpace | isDelete).trailingZeroBitCount / 8
    }
}

/// The scalars of a JSON5 document: identifiers, numbers, strings with
/// their escapes.
extension JSON5Reader {
    mutating func readIdentifier() -> String {
        let start = offset
        while let byte = peek, byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
                || (offset > start && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte))
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) {
            offset += 1
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    mutating func readNumber() throws(JSON5SyntaxError) -> JSONValue.Kind {
        let start = offset
        let startPosition = here()
        if peek == UInt8(ascii: "-") || peek == UInt8(ascii: "+") { offset += 1 }
        if peek.map({ (UInt8(ascii: "A")...UInt8(ascii: "z")).contains($0) }) == true {
            let word = readIdentifier()
            throw error("\(word) is not accepted: numbers must be finite", at: startPosition)
        }
        let digitsStart = offset
        skipDigits()
        guard offset > digitsStart else { throw error("a number needs digits before any '.' or exponent", at: startPosition) }
        var isInteger = true
        if peek == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            let fractionStart = offset
            skipDigits()
            guard offset > fractionStart else { throw error("a number needs digits after '.'", at: startPosition) }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if peek == UInt8(ascii: "-") || peek == UInt8(ascii: "+") { offset += 1 }
            let exponentStart = offset
            skipDigits()
            guard offset > exponentStart else { throw error("a number needs digits in its exponent", at: startPosition) }
        }
        var text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if text.hasPrefix("+") { text.removeFirst() }
        if isInteger {
            guard let value = Int64(text) else {
                throw error("integer \(text) does not fit in 64 bits", at: startPosition)
            }
            return .integer(value)
        }
        guard let value = Double(text), value.isFinite else {
            throw error("number \(text) is out of range", at: startPosition)
        }
        return .number(value)
    }

    mutating func skipDigits() {
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
    }

    // MARK: strings

    /// A double- or single-quoted string with JSON's escapes (plus `\'`).
    /// RFC 8259 §7: control characters must be escaped; `\u` pairs of UTF-16
    /// surrogates form one scalar, and a lone surrogate is refused.
    mutating func readString() throws(JSON5SyntaxError) -> String {
        let quote = bytes[offset]
        let startPosition = here()
        offset += 1
        // Nearly every string of a configuration (host names, pins, keys) has no
        // escape: it is its bytes, made into one String without going scalar by scalar.
        var end = offset
        while end < bytes.count, bytes[end] != quote, bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == quote {
            let text = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = end + 1
            return text
        }
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        func flush(_ reader: JSON5Reader, upTo end: Int) {
            scalars.append(contentsOf: String(decoding: reader.bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while true {
            guard let byte = peek else { throw error("unterminated string", at: startPosition) }
            if byte == quote {
                flush(self, upTo: offset)
                offset += 1
                return String(scalars)
            }
            if byte < 0x20 {
                throw error("control character \(describe(byte)) inside a string (escape it)")
            }
            if byte != UInt8(ascii: "\\") { offset += 1; continue }
            flush(self, upTo: offset)
            offset += 1
            guard let escape = peek else { throw error("unterminated string", at: startPosition) }
            offset += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "'"): scalars.append("'")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"): scalars.append(try readUnicodeEscape())
            default: throw error("unknown escape \\\(describe(escape)) in a string")
            }
            runStart = offset
        }
    }

    mutating func readUnicodeEscape() throws(JSON5SyntaxError) -> Unicode.Scalar {
        let high = try readHex4()
        if (0xD800...0xDBFF).contains(high) {
            guard peek == UInt8(ascii: "\\"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "u") else {
                throw error("lone UTF-16 surrogate \\u\(String(high, radix: 16)) in a string")
            }
            offset += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw error("lone UTF-16 surrogate \\u\(String(high, radix: 16)) in a string")
            }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        }
        guard let scalar = Unicode.Scalar(high) else {
            throw error("lone UTF-16 surrogate \\u\(String(high, radix: 16)) in a string")
        }
        return scalar
    }

    mutating func readHex4() throws(JSON5SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = hexValue(byte) else { throw error("\\u needs four hex digits") }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

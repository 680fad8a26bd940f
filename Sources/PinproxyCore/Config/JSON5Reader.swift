/// A small reader for the JSON5 subset SPEC §2 promises: JSON (RFC 8259) plus
/// `//` and `/* */` comments, trailing commas, single-quoted strings and
/// unquoted identifier keys.
///
/// Written by hand rather than with `JSONSerialization` because configuration
/// errors must name a line and column, duplicate keys must be refused (RFC 8259
/// §4 leaves them undefined; a duplicate pin list would silently win), and
/// object key order matters for stable messages. Limits keep a hostile file
/// from exhausting the daemon: 4 MiB of input, 64 levels of nesting.
public struct JSON5Reader {
    /// Largest accepted document, in bytes.
    public static let maximumInputBytes = 4 * 1024 * 1024
    /// Deepest accepted nesting of arrays and objects.
    public static let maximumDepth = 64

    private let bytes: [UInt8]
    private var offset = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0

    private init(_ text: String) { bytes = Array(text.utf8) }

    /// Parses one JSON5 document; the whole text must be that one value
    /// (whitespace and comments around it allowed).
    public static func parse(_ text: String) throws(JSON5SyntaxError) -> JSONValue {
        var reader = JSON5Reader(text)
        guard reader.bytes.count <= maximumInputBytes else {
            throw reader.error("document is \(reader.bytes.count) bytes, more than the limit of \(maximumInputBytes)")
        }
        try reader.skipInsignificant()
        guard reader.offset < reader.bytes.count else { throw reader.error("empty document: expected a JSON value") }
        let value = try reader.readValue()
        try reader.skipInsignificant()
        guard reader.offset == reader.bytes.count else { throw reader.error("unexpected text after the document's value") }
        return value
    }

    // MARK: values

    private mutating func readValue() throws(JSON5SyntaxError) -> JSONValue {
        let start = position
        guard let byte = peek else { throw error("unexpected end of input: expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return JSONValue(.object(try readObject()), at: start)
        case UInt8(ascii: "["): return JSONValue(.array(try readArray()), at: start)
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return JSONValue(.string(try readString()), at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
            return JSONValue(try readNumber(), at: start)
        default:
            let word = readIdentifier()
            switch word {
            case "true": return JSONValue(.bool(true), at: start)
            case "false": return JSONValue(.bool(false), at: start)
            case "null": return JSONValue(.null, at: start)
            case "NaN", "Infinity":
                throw error("\(word) is not accepted: numbers must be finite", at: start)
            case "":
                throw error("unexpected character \(describe(byte)): expected a value")
            default:
                throw error("unexpected word \"\(word)\": expected a value (strings need quotes)", at: start)
            }
        }
    }

    private mutating func readObject() throws(JSON5SyntaxError) -> [JSONValue.Member] {
        try enterNesting()
        offset += 1
        var members: [JSONValue.Member] = []
        var firstSeen: [String: JSONValue.Position] = [:]
        while true {
            try skipInsignificant()
            guard let byte = peek else { throw error("unexpected end of input inside an object: expected a key or '}'") }
            if byte == UInt8(ascii: "}") { offset += 1; break }
            let keyPosition = position
            let key: String
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                key = try readString()
            } else {
                key = readIdentifier()
                guard !key.isEmpty else { throw error("unexpected character \(describe(byte)): expected a key or '}'") }
            }
            if let earlier = firstSeen[key] {
                throw error("duplicate key \"\(key)\" (first at \(earlier))", at: keyPosition)
            }
            firstSeen[key] = keyPosition
            try skipInsignificant()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after key \"\(key)\"") }
            offset += 1
            try skipInsignificant()
            members.append(JSONValue.Member(key: key, position: keyPosition, value: try readValue()))
            try skipInsignificant()
            if peek == UInt8(ascii: ",") { offset += 1; continue }
            if peek == UInt8(ascii: "}") { offset += 1; break }
            throw error("expected ',' or '}' after the value of \"\(key)\"")
        }
        depth -= 1
        return members
    }

    private mutating func readArray() throws(JSON5SyntaxError) -> [JSONValue] {
        try enterNesting()
        offset += 1
        var elements: [JSONValue] = []
        while true {
            try skipInsignificant()
            guard let byte = peek else { throw error("unexpected end of input inside an array: expected a value or ']'") }
            if byte == UInt8(ascii: "]") { offset += 1; break }
            elements.append(try readValue())
            try skipInsignificant()
            if peek == UInt8(ascii: ",") { offset += 1; continue }
            if peek == UInt8(ascii: "]") { offset += 1; break }
            throw error("expected ',' or ']' after array element \(elements.count - 1)")
        }
        depth -= 1
        return elements
    }

    private mutating func enterNesting() throws(JSON5SyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    /// An ECMAScript-style identifier (ASCII letters, digits, `_`, `$`), used
    /// for unquoted keys and the literals `true`, `false`, `null`.
    private mutating func readIdentifier() -> String {
        let start = offset
        while let byte = peek, byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
                || (offset > start && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte))
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) {
            offset += 1
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func readNumber() throws(JSON5SyntaxError) -> JSONValue.Kind {
        let start = offset
        let startPosition = position
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

    private mutating func skipDigits() {
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
    }

    // MARK: strings

    /// A double- or single-quoted string with JSON's escapes (plus `\'`).
    /// RFC 8259 §7: control characters must be escaped; `\u` pairs of UTF-16
    /// surrogates form one scalar, and a lone surrogate is refused.
    private mutating func readString() throws(JSON5SyntaxError) -> String {
        let quote = bytes[offset]
        let startPosition = position
        offset += 1
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

    private mutating func readUnicodeEscape() throws(JSON5SyntaxError) -> Unicode.Scalar {
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

    private mutating func readHex4() throws(JSON5SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = hexValue(byte) else { throw error("\\u needs four hex digits") }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    // MARK: whitespace, comments, positions

    /// Skips whitespace, `// …` to the end of the line and `/* … */`.
    private mutating func skipInsignificant() throws(JSON5SyntaxError) {
        while let byte = peek {
            switch byte {
            case UInt8(ascii: "\n"):
                offset += 1
                line += 1
                lineStart = offset
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                offset += 1
            case UInt8(ascii: "/") where offset + 1 < bytes.count && bytes[offset + 1] == UInt8(ascii: "/"):
                while let next = peek, next != UInt8(ascii: "\n") { offset += 1 }
            case UInt8(ascii: "/") where offset + 1 < bytes.count && bytes[offset + 1] == UInt8(ascii: "*"):
                let start = position
                offset += 2
                while true {
                    guard let next = peek else { throw error("unterminated /* comment", at: start) }
                    if next == UInt8(ascii: "*"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "/") {
                        offset += 2
                        break
                    }
                    offset += 1
                    if next == UInt8(ascii: "\n") { line += 1; lineStart = offset }
                }
            case 0xEF where offset == 0 && bytes.starts(with: [0xEF, 0xBB, 0xBF]):
                offset += 3 // a UTF-8 byte order mark some editors write
            default:
                return
            }
        }
    }

    private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    /// The current position; columns count UTF-8 lead bytes, i.e. scalars.
    private var position: JSONValue.Position {
        JSONValue.Position(line: line, column: column(at: offset, lineStart: lineStart))
    }

    private func column(at offset: Int, lineStart: Int) -> Int {
        bytes[lineStart..<min(offset, bytes.count)].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }

    private func describe(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16, uppercase: true)
    }

    private func error(_ message: String) -> JSON5SyntaxError { error(message, at: position) }

    /// An error at `at`, quoting that line (or 60 characters of it around the column).
    private func error(_ message: String, at where_: JSONValue.Position) -> JSON5SyntaxError {
        var start = lineStart
        var currentLine = line
        // `where_` may be on an earlier line (an unterminated string or comment): find that line's start.
        while currentLine > where_.line, start > 0 {
            start -= 1
            while start > 0, bytes[start - 1] != UInt8(ascii: "\n") { start -= 1 }
            currentLine -= 1
        }
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\n"), bytes[end] != UInt8(ascii: "\r") { end += 1 }
        let lineText = String(decoding: bytes[start..<end], as: UTF8.self)
        // Short lines are quoted whole (minus indentation); long ones as a window around the column.
        let snippet = lineText.count <= 60
            ? String(lineText.drop { $0 == " " || $0 == "\t" })
            : String(lineText.dropFirst(max(0, where_.column - 21)).prefix(60))
        return JSON5SyntaxError(line: where_.line, column: where_.column, message: message, snippet: snippet)
    }
}

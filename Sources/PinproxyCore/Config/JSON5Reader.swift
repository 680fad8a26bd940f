/// A small reader for the JSON5 subset SPEC §2 promises: JSON (RFC 8259) plus
/// `//` and `/* */` comments, trailing commas, single-quoted strings and
/// unquoted identifier keys.
///
/// Written by hand rather than with `JSONSerialization` because configuration
/// errors must name a line and column, duplicate keys must be refused (RFC 8259
/// §4 leaves them undefined; a duplicate pin list would silently win), and
/// object key order matters for stable messages. Limits keep a hostile file
/// from exhausting the daemon: 64 MiB of input (100,000 host rules take
/// about 15 MB), 64 levels of nesting.
public struct JSON5Reader {
    /// Largest accepted document, in bytes.
    public static let maximumInputBytes = 64 * 1024 * 1024
    /// Deepest accepted nesting of arrays and objects.
    public static let maximumDepth = 64
    /// Members from which an object's duplicate keys are found by a dictionary rather than a scan.
    static let largeObjectMembers = 16

    /// The document's UTF-8, read in place (`parse` lends it for the parse).
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    var line = 1
    var lineStart = 0
    private var depth = 0
    /// The column at `offset` on the line that starts at `lineStart`, as last counted.
    private var counted = (lineStart: 0, offset: 0, column: 1)

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses one JSON5 document; the whole text must be that one value
    /// (whitespace and comments around it allowed).
    public static func parse(_ text: String) throws(JSON5SyntaxError) -> JSONValue {
        guard text.utf8.count <= maximumInputBytes else {
            throw JSON5SyntaxError(line: 1, column: 1, message: "document is \(text.utf8.count) bytes, more than the limit of \(maximumInputBytes)",
                                   snippet: "")
        }
        // The text's own UTF-8 storage, not a copy of it: a 100,000-rule file is 15-25 MB.
        var text = text
        return try text.withUTF8 { bytes in
            Result { () throws(JSON5SyntaxError) -> JSONValue in try parse(bytes: bytes) }
        }.get()
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) throws(JSON5SyntaxError) -> JSONValue {
        var reader = JSON5Reader(bytes)
        try reader.skipInsignificant()
        guard reader.offset < reader.bytes.count else { throw reader.error("empty document: expected a JSON value") }
        let value = try reader.readValue()
        try reader.skipInsignificant()
        guard reader.offset == reader.bytes.count else { throw reader.error("unexpected text after the document's value") }
        return value
    }

    // MARK: values

    mutating func readValue() throws(JSON5SyntaxError) -> JSONValue {
        let start = here()
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
        // Duplicate keys: a policy object has a handful of members, found by a
        // scan; only a large object (`hosts`) is worth a dictionary, made once
        // it has that many.
        var firstSeen: [String: JSONValue.Position]?
        while true {
            try skipInsignificant()
            guard let byte = peek else { throw error("unexpected end of input inside an object: expected a key or '}'") }
            if byte == UInt8(ascii: "}") { offset += 1; break }
            let keyPosition = here()
            let key: String
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                key = try readString()
            } else {
                key = readIdentifier()
                guard !key.isEmpty else { throw error("unexpected character \(describe(byte)): expected a key or '}'") }
            }
            let earlier = firstSeen != nil ? firstSeen![key] : members.first(where: { $0.key == key })?.position
            if let earlier {
                throw error("duplicate key \"\(key)\" (first at \(earlier))", at: keyPosition)
            }
            if firstSeen != nil {
                firstSeen![key] = keyPosition
            } else if members.count == Self.largeObjectMembers {
                firstSeen = Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.position) })
                firstSeen![key] = keyPosition
            }
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
    // MARK: whitespace, comments, positions

    /// Skips whitespace, `// …` to the end of the line and `/* … */`.
    mutating func skipInsignificant() throws(JSON5SyntaxError) {
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
                let start = here()
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

    var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    /// The current position; columns count UTF-8 lead bytes, i.e. scalars.
    /// Counted on from the last position asked for on the same line, so that
    /// a one-line document (as `jq -c` writes) costs linear time, not
    /// quadratic: every value asks for its position.
    mutating func here() -> JSONValue.Position {
        if counted.lineStart != lineStart || counted.offset > offset {
            counted = (lineStart, lineStart, 1)
        }
        counted.column = Self.column(bytes, from: counted.offset, to: offset, startingAt: counted.column)
        counted.offset = offset
        return JSONValue.Position(line: line, column: counted.column)
    }

    /// The position without the running count (for errors, which end the parse).
    var position: JSONValue.Position {
        JSONValue.Position(line: line, column: Self.column(bytes, from: lineStart, to: offset, startingAt: 1))
    }

    private static func column(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, startingAt column: Int) -> Int {
        bytes[start..<min(end, bytes.count)].reduce(column) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }

    func describe(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16, uppercase: true)
    }

    func error(_ message: String) -> JSON5SyntaxError { error(message, at: position) }

    /// An error at `at`, quoting that line (or 60 characters of it around the column).
    func error(_ message: String, at where_: JSONValue.Position) -> JSON5SyntaxError {
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

/// Pieces of start-line grammar shared by the request and response parsers
/// (RFC 9112 §2.3, §3, §4), scanned incrementally from a byte offset.
enum StartLineSyntax {
    enum Outcome: Equatable {
        case needMore
        case invalid(String)
        /// For `version`: the two digits; `end` is the offset after the match.
        case parsed(major: UInt8, minor: UInt8, end: Int)
    }

    private static let httpSlash: [UInt8] = Array("HTTP/".utf8)

    /// `HTTP-version = "HTTP/" DIGIT "." DIGIT` (case-sensitive, RFC 9112 §2.3).
    static func version(_ bytes: UnsafeRawBufferPointer, at start: Int, limit: Int) -> Outcome {
        var index = start
        for expected in httpSlash {
            guard index < limit else { return .needMore }
            guard bytes[index] == expected else { return .invalid("invalid http version") }
            index += 1
        }
        guard index < limit else { return .needMore }
        let major = bytes[index]
        guard HTTPSyntax.isDigit(major) else { return .invalid("invalid http version") }
        index += 1
        guard index < limit else { return .needMore }
        guard bytes[index] == UInt8(ascii: ".") else { return .invalid("invalid http version") }
        index += 1
        guard index < limit else { return .needMore }
        let minor = bytes[index]
        guard HTTPSyntax.isDigit(minor) else { return .invalid("invalid http version") }
        return .parsed(major: major - UInt8(ascii: "0"), minor: minor - UInt8(ascii: "0"), end: index + 1)
    }

    /// Exactly CRLF; a bare CR or LF is refused at once (RFC 9112 §2.2).
    static func lineEnd(_ bytes: UnsafeRawBufferPointer, at index: Int, limit: Int) -> Outcome {
        guard index < limit else { return .needMore }
        switch bytes[index] {
        case HTTPSyntax.cr:
            guard index + 1 < limit else { return .needMore }
            guard bytes[index + 1] == HTTPSyntax.lf else { return .invalid("bare cr in start line") }
            return .parsed(major: 0, minor: 0, end: index + 2)
        case HTTPSyntax.lf:
            return .invalid("bare lf in start line")
        default:
            return .invalid("invalid start line")
        }
    }
}

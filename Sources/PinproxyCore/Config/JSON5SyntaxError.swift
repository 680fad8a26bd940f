/// Why a configuration text is not a JSON5 document, and where.
///
/// The reader stops at the first syntax error (what follows a syntax error
/// cannot be read reliably); `snippet` quotes the source around the position so
/// the operator sees the offending text without opening the file.
public struct JSON5SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    /// The line of the error without its indentation, or 60 characters of it around the column.
    public var snippet: String

    public init(line: Int, column: Int, message: String, snippet: String) {
        self.line = line
        self.column = column
        self.message = message
        self.snippet = snippet
    }

    /// `LINE:COLUMN: message near "snippet"`.
    public var description: String { "\(line):\(column): \(message) near \"\(snippet)\"" }
}

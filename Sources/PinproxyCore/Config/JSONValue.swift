/// One value of a parsed JSON5 document, with the place it starts in the
/// source, so that every configuration problem can name a line.
///
/// Objects keep their members in source order and carry each key's position;
/// the reader has already refused duplicate keys, so a key names at most one
/// member. Integers that fit an `Int64` stay exact; anything with a fraction
/// or an exponent is a `Double`.
public struct JSONValue: Sendable, Hashable {
    /// A 1-based line and column (columns count characters, not bytes).
    public struct Position: Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public init(line: Int, column: Int) { self.line = line; self.column = column }
        public var description: String { "\(line):\(column)" }
    }

    /// One `key: value` pair of an object; `position` is where the key starts.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var position: Position
        public var value: JSONValue
        public init(key: String, position: Position, value: JSONValue) {
            self.key = key
            self.position = position
            self.value = value
        }
    }

    /// The shape of a value.
    public enum Kind: Sendable, Hashable {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([Member])
    }

    public var kind: Kind
    /// Where the value's first character is.
    public var position: Position

    public init(_ kind: Kind, at position: Position) {
        self.kind = kind
        self.position = position
    }

    /// The JSON type name used in error messages ("expected a string, found an array").
    public var typeName: String {
        switch kind {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value as a string literal, when it is one.
    public var stringValue: String? {
        if case .string(let text) = kind { return text }
        return nil
    }

    /// The member named `key`, when this is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = kind else { return nil }
        return members.first { $0.key == key }?.value
    }
}

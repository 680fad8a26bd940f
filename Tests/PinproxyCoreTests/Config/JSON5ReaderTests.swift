import Testing
@testable import PinproxyCore

@Suite("JSON5Reader")
struct JSON5ReaderTests {
    @Test("comments, trailing commas, single quotes and unquoted keys are accepted")
    func json5Subset() throws {
        let text = """
        // leading comment
        {
          "a": [1, 2, /* inline */ 3,],
          b: 'it\\'s',
          "c": { "d": true, "e": null, }, // trailing
          "f": -2.5e1,
        }
        """
        let value = try JSON5Reader.parse(text)
        guard case .object(let members) = value.kind else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["a", "b", "c", "f"])
        #expect(members.map(\.position) == [
            .init(line: 3, column: 3), .init(line: 4, column: 3), .init(line: 5, column: 3), .init(line: 6, column: 3),
        ])
        #expect(value["a"]?.kind == .array([
            JSONValue(.integer(1), at: .init(line: 3, column: 9)),
            JSONValue(.integer(2), at: .init(line: 3, column: 12)),
            JSONValue(.integer(3), at: .init(line: 3, column: 28)),
        ]))
        #expect(value["b"]?.kind == .string("it's"))
        #expect(value["c"]?["d"]?.kind == .bool(true))
        #expect(value["c"]?["e"]?.kind == .null)
        #expect(value["f"]?.kind == .number(-25))
    }

    @Test("string escapes decode, including surrogate pairs", arguments: [
        (#""a\"b\\c\/d""#, "a\"b\\c/d"),
        (#""\n\t\r\b\f""#, "\n\t\r\u{08}\u{0C}"),
        (#""\u00e9\u20AC""#, "é€"),
        (#""\ud83d\ude00""#, "😀"),
        ("\"héllo\"", "héllo"),
    ])
    func escapes(text: String, expected: String) throws {
        #expect(try JSON5Reader.parse(text).kind == .string(expected))
    }

    @Test("integers stay exact to Int64; others are doubles", arguments: [
        ("9223372036854775807", JSONValue.Kind.integer(.max)),
        ("-9223372036854775808", .integer(.min)),
        ("0", .integer(0)),
        ("+7", .integer(7)),
        ("1.5", .number(1.5)),
        ("1e3", .number(1000)),
    ])
    func numbers(text: String, expected: JSONValue.Kind) throws {
        #expect(try JSON5Reader.parse(text).kind == expected)
    }

    @Test("syntax errors carry line, column, message and a quoted snippet", arguments: [
        ("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected ',' or '}' after the value of \"a\"", "\"b\": 2"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\" (first at 1:2)", "{\"a\": 1, \"a\": 2}"),
        ("[1, 2", 1, 6, "expected ',' or ']' after array element 1", "[1, 2"),
        ("[1,", 1, 4, "unexpected end of input inside an array: expected a value or ']'", "[1,"),
        ("{\"a\": NaN}", 1, 7, "NaN is not accepted: numbers must be finite", "{\"a\": NaN}"),
        ("{\"a\": -Infinity}", 1, 7, "Infinity is not accepted: numbers must be finite", "{\"a\": -Infinity}"),
        ("{\"a\": 99999999999999999999}", 1, 7, "integer 99999999999999999999 does not fit in 64 bits", "{\"a\": 99999999999999999999}"),
        ("{\"a\": \"x\ny\"}", 1, 9, "control character 0xA inside a string (escape it)", "{\"a\": \"x"),
        ("{\"a\": \"abc", 1, 7, "unterminated string", "{\"a\": \"abc"),
        ("/* never closed\n{}", 1, 1, "unterminated /* comment", "/* never closed"),
        ("{\"a\": yes}", 1, 7, "unexpected word \"yes\": expected a value (strings need quotes)", "{\"a\": yes}"),
        ("{} {}", 1, 4, "unexpected text after the document's value", "{} {}"),
        ("", 1, 1, "empty document: expected a JSON value", ""),
        ("\"\\ud800\"", 1, 8, "lone UTF-16 surrogate \\ud800 in a string", "\"\\ud800\""),
        ("{\"k\": \"\\q\"}", 1, 10, "unknown escape \\'q' in a string", "{\"k\": \"\\q\"}"),
    ])
    func syntaxErrors(text: String, line: Int, column: Int, message: String, snippet: String) {
        #expect(throws: JSON5SyntaxError(line: line, column: column, message: message, snippet: snippet)) {
            try JSON5Reader.parse(text)
        }
    }

    @Test("nesting beyond 64 levels is refused, 64 is accepted")
    func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSON5Reader.parse(ok) }
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        let error = #expect(throws: JSON5SyntaxError.self) { try JSON5Reader.parse(deep) }
        #expect(error?.message == "nesting deeper than 64 levels")
        #expect(error?.column == 65)
    }

    @Test("documents over the 64 MiB limit are refused before parsing")
    func sizeLimit() {
        let text = "\"" + String(repeating: "a", count: JSON5Reader.maximumInputBytes) + "\""
        let error = #expect(throws: JSON5SyntaxError.self) { try JSON5Reader.parse(text) }
        #expect(error?.message == "document is 67108866 bytes, more than the limit of 67108864")
    }

    @Test("columns count characters, not bytes")
    func columnsInCharacters() throws {
        let value = try JSON5Reader.parse("{\"é€\": 1, \"b\": 2}")
        guard case .object(let members) = value.kind else { Issue.record("not an object"); return }
        #expect(members[1].position == JSONValue.Position(line: 1, column: 11))
    }

    @Test("every value's position is right on a long one-line document and after line breaks")
    func positionsOnLongLines() throws {
        // Multi-byte names and values, as `jq -c` would write them, then a second line.
        let members = (0..<300).map { "\"hôst\($0).example\":{\"p\":[\"é\($0)\",\($0)]}" }
        let text = "{" + members.joined(separator: ",") + ",\n  \"last\": 'ü'}"
        let document = try JSON5Reader.parse(text)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var checked = 0
        func check(_ value: JSONValue) {
            // The position must point at the value's first character.
            let line = Array(lines[value.position.line - 1])
            let character = line[value.position.column - 1]
            switch value.kind {
            case .object: #expect(character == "{")
            case .array: #expect(character == "[")
            case .string: #expect(character == "\"" || character == "'")
            default: #expect(character.isNumber)
            }
            checked += 1
            if case let .object(children) = value.kind {
                for child in children {
                    #expect(Array(lines[child.position.line - 1])[child.position.column - 1] == "\"")
                    check(child.value)
                }
            }
            if case let .array(children) = value.kind { children.forEach(check) }
        }
        check(document)
        #expect(checked == 1 + 300 * 4 + 1)
    }

    @Test("a duplicate key is refused, naming the first, in objects below and above the size that switches to a dictionary",
          arguments: [(2, 0), (15, 3), (16, 15), (17, 0), (17, 16), (40, 7), (40, 39)])
    func duplicateKeys(members count: Int, duplicating index: Int) throws {
        // One member per line: the first occurrence of key `index` is on line index + 2.
        let members = (0..<count).map { "  \"k\($0)\": \($0)," }
        let text = "{\n" + members.joined(separator: "\n") + "\n  \"k\(index)\": 0\n}"
        #expect(throws: JSON5SyntaxError(line: count + 2, column: 3, message: "duplicate key \"k\(index)\" (first at \(index + 2):3)",
                                         snippet: "\"k\(index)\": 0")) {
            try JSON5Reader.parse(text)
        }
        let distinct = "{\n" + members.joined(separator: "\n") + "\n  \"k\(count)\": 0\n}"
        guard case .object(let parsed) = try JSON5Reader.parse(distinct).kind else { Issue.record("not an object"); return }
        #expect(parsed.map(\.key) == (0...count).map { "k\($0)" })
    }

    @Test("strings with and without escapes decode alike next to each other", arguments: [
        ("[\"plain\", \"es\\\"caped\", \"\", \"ü-é\", 'single', \"tab\\there\"]", ["plain", "es\"caped", "", "ü-é", "single", "tab\there"]),
    ])
    func mixedStrings(text: String, expected: [String]) throws {
        guard case .array(let elements) = try JSON5Reader.parse(text).kind else { Issue.record("not an array"); return }
        #expect(elements.map(\.stringValue) == expected)
    }
}

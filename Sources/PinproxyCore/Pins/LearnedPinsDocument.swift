import Foundation

/// The learned-pins file (`learned-pins.json`, SPEC §2.1): each learning
/// rule's `LearnedPins`, keyed by the rule's `hosts` key. Learning is per rule
/// key: a renamed rule learns afresh, and an entry whose rule is gone stays
/// until someone deletes it.
///
/// ```json
/// { "version": 1,
///   "rules": { "api.example.com": { "host": "api.example.com", "learned_at": "2026-11-30T17:43:44Z",
///                                   "pins": ["sha256/…", "sha256/…"], "subjects": ["CN=…", "CN=…"] } } }
/// ```
///
/// Read as strictly as the configuration (unknown keys, bad pins and wrong
/// types are errors with a JSON path and line): the pins in it decide which
/// servers are relayed. Deleting a rule's entry (or the file) and reloading
/// re-arms learning for it.
public struct LearnedPinsDocument: Sendable, Hashable {
    public static let version = 1
    static let topLevelKeys = ["version", "rules"]
    static let entryKeys = ["host", "learned_at", "pins", "subjects"]

    public var rules: [String: LearnedPins]

    public init(rules: [String: LearnedPins] = [:]) { self.rules = rules }

    /// Parses the file's text; `source` (the file's path) names it in errors,
    /// each with its JSON path and line.
    public static func parse(_ text: String, source: String) throws(ConfigurationError) -> LearnedPinsDocument {
        let document: JSONValue
        do throws(JSON5SyntaxError) {
            document = try JSON5Reader.parse(text)
        } catch {
            throw ConfigurationError(source: source, problems: [ConfigurationProblem(
                path: "$", line: error.line, message: "column \(error.column): \(error.message) near \"\(error.snippet)\"",
                hint: Self.resetHint)])
        }
        var diagnostics = ConfigurationDiagnostics(now: Date())
        var rules: [String: LearnedPins] = [:]
        for member in diagnostics.members(of: document, at: .root, allowed: topLevelKeys) ?? [] {
            let path = JSONPath.root.key(member.key)
            if member.key == "version" {
                if let version = diagnostics.integer(member.value, at: path, in: 1...Int.max), version != Self.version {
                    diagnostics.problem(path, member.value, "version \(version) is not known to this pinproxy (it writes \(Self.version))")
                }
                continue
            }
            guard case .object(let entries) = member.value.kind else {
                diagnostics.problem(path, member.value, "expected an object of rule keys, found \(member.value.typeName)")
                continue
            }
            for entry in entries {
                if let pins = parseEntry(entry.value, at: path.entry(entry.key), into: &diagnostics) {
                    rules[entry.key] = pins
                }
            }
        }
        guard diagnostics.problems.isEmpty else {
            throw ConfigurationError(source: source, problems: diagnostics.problems)
        }
        return LearnedPinsDocument(rules: rules)
    }

    public static let resetHint = "fix the file, or delete it to learn every learning rule's pins again"

    private static func parseEntry(_ value: JSONValue, at path: JSONPath,
                                   into diagnostics: inout ConfigurationDiagnostics) -> LearnedPins? {
        let problemsBefore = diagnostics.problems.count
        var learned = LearnedPins(pins: [])
        for member in diagnostics.members(of: value, at: path, allowed: entryKeys) ?? [] {
            let memberPath = path.key(member.key)
            switch member.key {
            case "host":
                learned.host = diagnostics.string(member.value, at: memberPath)
            case "learned_at":
                guard let text = diagnostics.string(member.value, at: memberPath) else { continue }
                learned.learnedAt = RFC3339TimestampParser.parse(text)
                if learned.learnedAt == nil {
                    diagnostics.problem(memberPath, member.value, "\"\(text)\" is not an RFC 3339 time")
                }
            case "subjects":
                learned.subjects = (diagnostics.strings(member.value, at: memberPath) ?? []).map(\.0)
            default: // "pins"
                learned.pins = (diagnostics.strings(member.value, at: memberPath) ?? []).compactMap { text, elementPath, element in
                    do throws(PinParseError) {
                        return try SPKIPin.parse(text)
                    } catch {
                        diagnostics.problem(elementPath, element, error.message, hint: resetHint)
                        return nil
                    }
                }
            }
        }
        if diagnostics.problems.count == problemsBefore && learned.pins.isEmpty {
            diagnostics.problem(path, value, "an entry without pins", hint: "delete the entry to learn this rule's pins again")
        }
        return diagnostics.problems.count == problemsBefore ? learned : nil
    }

    /// The file's text: strict JSON (so `jq` reads it too), rules sorted by
    /// key, one value a line, so a person can find and delete one entry.
    public var text: String {
        func list(_ values: [String]) -> String {
            values.isEmpty ? "[]"
                : "[\n" + values.map { "        " + JSONLineWriter.quoted($0) }.joined(separator: ",\n") + "\n      ]"
        }
        let entries = rules.sorted { $0.key < $1.key }.map { key, learned in
            var members: [String] = []
            if let host = learned.host { members.append("\"host\": " + JSONLineWriter.quoted(host)) }
            if let time = learned.learnedAt { members.append("\"learned_at\": " + JSONLineWriter.quoted(RFC3339Timestamp.seconds(time))) }
            members.append("\"pins\": " + list(learned.pins.map(\.description)))
            if !learned.subjects.isEmpty { members.append("\"subjects\": " + list(learned.subjects)) }
            return "    " + JSONLineWriter.quoted(key) + ": {\n      " + members.joined(separator: ",\n      ") + "\n    }"
        }
        let rules = entries.isEmpty ? "{}" : "{\n" + entries.joined(separator: ",\n") + "\n  }"
        return "{\n  \"version\": \(Self.version),\n  \"rules\": \(rules)\n}\n"
    }
}

import Foundation

/// The problems and warnings of one validation run, and the typed readers
/// every section uses so that each type error is reported the same way.
///
/// Readers return nil after recording a problem; callers keep going with the
/// next key, so that one run reports everything wrong with a file.
struct ConfigurationDiagnostics {
    private(set) var problems: [ConfigurationProblem] = []
    private(set) var warnings: [ConfigurationWarning] = []
    /// Every member `requireReadableFile` was asked about, in file order.
    private(set) var fileReferences: [FileReference] = []
    /// The instant "expires within 30 days" is measured from.
    let now: Date
    /// One copy of each distinct `pins` list of the file, shared by its rules.
    var pinLists = PinListInterner()

    init(now: Date) { self.now = now }

    mutating func problem(_ path: JSONPath, line: Int?, _ message: String, hint: String? = nil) {
        problems.append(ConfigurationProblem(path: path.description, line: line, message: message, hint: hint))
    }

    mutating func problem(_ path: JSONPath, _ value: JSONValue, _ message: String, hint: String? = nil) {
        problem(path, line: value.position.line, message, hint: hint)
    }

    mutating func warn(_ path: JSONPath, _ message: String) {
        warnings.append(ConfigurationWarning(path: path.description, message: message))
    }

    // MARK: shapes

    /// The members of an object, after reporting every key not in `allowed`
    /// (with a "did you mean"); nil (and a problem) when `value` is not an object.
    mutating func members(of value: JSONValue, at path: JSONPath, allowed: [String]) -> [JSONValue.Member]? {
        guard case .object(let members) = value.kind else {
            problem(path, value, "expected an object, found \(value.typeName)")
            return nil
        }
        // One pass, and no copy when every key is allowed (the case for every valid rule).
        var unknown: [Int] = []
        for (index, member) in members.enumerated() where !allowed.contains(member.key) {
            reportUnknownKey(member, at: path, allowed: allowed)
            unknown.append(index)
        }
        guard !unknown.isEmpty else { return members }
        return members.enumerated().filter { !unknown.contains($0.offset) }.map(\.element)
    }

    mutating func reportUnknownKey(_ member: JSONValue.Member, at path: JSONPath, allowed: [String]) {
        let suggestion = KeySuggestion.closest(to: member.key, among: allowed)
        let message = "unknown key \(path.key(member.key))"
            + (suggestion.map { "; did you mean \"\($0)\"?" } ?? "")
        problem(path.key(member.key), line: member.position.line, message,
                hint: suggestion == nil ? "allowed keys: " + allowed.joined(separator: ", ") : nil)
    }

    mutating func string(_ value: JSONValue, at path: JSONPath) -> String? {
        guard case .string(let text) = value.kind else {
            problem(path, value, "expected a string, found \(value.typeName)")
            return nil
        }
        return text
    }

    mutating func bool(_ value: JSONValue, at path: JSONPath) -> Bool? {
        guard case .bool(let flag) = value.kind else {
            problem(path, value, "expected true or false, found \(value.typeName)")
            return nil
        }
        return flag
    }

    /// An integer within `range`; the message quotes the value and the range.
    mutating func integer(_ value: JSONValue, at path: JSONPath, in range: ClosedRange<Int>) -> Int? {
        guard case .integer(let number) = value.kind else {
            problem(path, value, "expected an integer in \(range.lowerBound)…\(range.upperBound), found \(value.typeName)")
            return nil
        }
        guard let exact = Int(exactly: number), range.contains(exact) else {
            problem(path, value, "\(number) is out of range \(range.lowerBound)…\(range.upperBound)")
            return nil
        }
        return exact
    }

    /// An array of strings; each non-string element is reported and skipped.
    mutating func strings(_ value: JSONValue, at path: JSONPath) -> [(String, JSONPath, JSONValue)]? {
        guard case .array(let elements) = value.kind else {
            problem(path, value, "expected an array of strings, found \(value.typeName)")
            return nil
        }
        return elements.enumerated().compactMap { index, element in
            string(element, at: path.index(index)).map { ($0, path.index(index), element) }
        }
    }

    /// Records a problem unless `file` names a readable regular file (or, for
    /// `allowDirectory`, a readable directory).
    mutating func requireReadableFile(_ file: String, at path: JSONPath, _ value: JSONValue, what: String,
                                      allowDirectory: Bool = false) {
        fileReferences.append(FileReference(path: path.description, line: value.position.line, file: file))
        var isDirectory: ObjCBool = false
        let manager = FileManager.default
        if !manager.fileExists(atPath: file, isDirectory: &isDirectory) {
            problem(path, value, "\(what) \"\(file)\" does not exist",
                    hint: "check the path; relative paths are resolved from the working directory")
        } else if isDirectory.boolValue && !allowDirectory {
            problem(path, value, "\(what) \"\(file)\" is a directory, not a file")
        } else if !manager.isReadableFile(atPath: file) {
            problem(path, value, "\(what) \"\(file)\" is not readable",
                    hint: "give the pinproxy user read permission on it")
        }
    }
}

import Foundation

/// A JSON path as shown to operators: `$`, then `.key` for identifier-like
/// keys, `["key"]` for any other key (host names contain dots), `[index]` for
/// array elements. Keys are shown as written in the file, not normalised, so
/// the operator can search for them.
struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    private(set) var description: String

    static let root = JSONPath(description: "$")

    func key(_ key: String) -> JSONPath {
        let isIdentifier = !key.isEmpty && key.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        } && !(key.first?.isNumber ?? true)
        return isIdentifier ? JSONPath(description: description + "." + key) : entry(key)
    }

    /// `["key"]` even for identifier-like keys: used for `hosts` and `resolve`
    /// entries, whose keys are data (host names), not schema.
    func entry(_ key: String) -> JSONPath {
        // Built for every entry of a large `hosts` section: Foundation only when there is something to escape.
        let needsEscaping = key.utf8.contains { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }
        let escaped = needsEscaping
            ? key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            : key
        return JSONPath(description: description + "[\"" + escaped + "\"]")
    }

    func index(_ index: Int) -> JSONPath { JSONPath(description: description + "[\(index)]") }
}

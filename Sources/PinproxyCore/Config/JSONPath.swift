import Foundation

/// A JSON path as shown to operators: `$`, then `.key` for identifier-like
/// keys, `["key"]` for any other key (host names contain dots), `[index]` for
/// array elements. Keys are shown as written in the file, not normalised, so
/// the operator can search for them.
///
/// Every key of every rule gets a path while it is validated, and nearly none
/// is ever shown (only a problem or warning spells its path), so a path is a
/// link to its parent plus one step, spelled out only when asked for: 100,000
/// host rules no longer build 400,000 strings that are thrown away.
struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    private enum Step: Sendable {
        case root
        /// `.key` when the key is identifier-like, else `["key"]`.
        case key(String)
        /// Always `["key"]`.
        case entry(String)
        case index(Int)
    }

    private final class Node: Sendable {
        let parent: Node?
        let step: Step
        init(parent: Node?, step: Step) {
            self.parent = parent
            self.step = step
        }
    }

    private let node: Node

    static let root = JSONPath(node: Node(parent: nil, step: .root))

    func key(_ key: String) -> JSONPath { JSONPath(node: Node(parent: node, step: .key(key))) }

    /// `["key"]` even for identifier-like keys: used for `hosts` and `resolve`
    /// entries, whose keys are data (host names), not schema.
    func entry(_ key: String) -> JSONPath { JSONPath(node: Node(parent: node, step: .entry(key))) }

    func index(_ index: Int) -> JSONPath { JSONPath(node: Node(parent: node, step: .index(index))) }

    var description: String {
        var steps: [Step] = []
        var current: Node? = node
        while let step = current {
            steps.append(step.step)
            current = step.parent
        }
        var text = ""
        for step in steps.reversed() {
            switch step {
            case .root: text += "$"
            case .key(let key): text += Self.isIdentifier(key) ? "." + key : Self.quoted(key)
            case .entry(let key): text += Self.quoted(key)
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    static func == (lhs: JSONPath, rhs: JSONPath) -> Bool { lhs.description == rhs.description }

    func hash(into hasher: inout Hasher) { hasher.combine(description) }

    private static func isIdentifier(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        } && !(key.first?.isNumber ?? true)
    }

    private static func quoted(_ key: String) -> String {
        let needsEscaping = key.utf8.contains { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }
        let escaped = needsEscaping
            ? key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            : key
        return "[\"" + escaped + "\"]"
    }
}

/// One thing wrong with a configuration, located precisely enough to fix it
/// without reading the code: a JSON path, the source line, a message that
/// quotes the bad input, and what would fix it.
public struct ConfigurationProblem: Sendable, Hashable, CustomStringConvertible {
    /// JSON path of the offending value or key, e.g. `$.hosts["api.example.com"].pins[1]`.
    public var path: String
    /// 1-based source line, when the problem is tied to one.
    public var line: Int?
    /// What is wrong, quoting the input.
    public var message: String
    /// What would fix it, when there is a clear answer.
    public var hint: String?

    public init(path: String, line: Int?, message: String, hint: String? = nil) {
        self.path = path
        self.line = line
        self.message = message
        self.hint = hint
    }

    /// `$.path: message (hint)`; the source and line are added by `ConfigurationError`.
    public var description: String {
        hint.map { "\(path): \(message) (\($0))" } ?? "\(path): \(message)"
    }
}

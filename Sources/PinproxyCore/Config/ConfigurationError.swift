/// A configuration that cannot be used, with every problem found in it.
///
/// Validation never stops at the first problem: an operator fixing a file
/// should see all of them in one `pinproxy check`. Invariant: `problems` is
/// never empty when thrown by `ConfigurationLoader`.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The file path, or `<text>` for a configuration given as a string.
    public var source: String
    public var problems: [ConfigurationProblem]

    public init(source: String, problems: [ConfigurationProblem]) {
        self.source = source
        self.problems = problems
    }

    /// One line per problem, `FILE:LINE: $.path: message (hint)` (no `:LINE`
    /// when the problem has no line), in the style of compiler diagnostics so
    /// that editors can jump to them.
    public var description: String {
        problems.map { problem in
            let location = problem.line.map { "\(source):\($0)" } ?? source
            return "\(location): \(problem)"
        }.joined(separator: "\n")
    }
}

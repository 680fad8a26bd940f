/// Why the learned-pins file cannot be used: the file, what is wrong with it
/// and what fixes it (SPEC §1: every error names the thing and the fix).
/// pinproxy refuses to start (and a reload is rejected) on one: pinned traffic
/// is never relayed without the pins it is pinned to.
public struct LearnedPinFileError: Error, CustomStringConvertible, Sendable {
    /// The file or its directory.
    public let path: String
    public let problem: String
    public let fix: String

    public var description: String { "\(path): \(problem); \(fix)" }

    static func io(_ path: String, _ problem: String) -> LearnedPinFileError {
        LearnedPinFileError(path: path, problem: problem, fix: "check the path and its permissions")
    }
}

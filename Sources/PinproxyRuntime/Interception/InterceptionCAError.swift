/// Why the local interception CA cannot be created or used: the file, what
/// is wrong with it, and the command that fixes it (SPEC §1: every error
/// names the thing and the fix).
public struct InterceptionCAError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Hashable {
        /// No CA in the directory yet.
        case missing
        /// A key or the directory is open to group/other, or owned by another user.
        case permissions
        /// The files exist but do not make a valid CA (corrupt, mismatched, expired).
        case unusable
        /// The directory or a file could not be created or written.
        case io
    }

    public let kind: Kind
    /// The file or directory concerned.
    public let path: String
    public let problem: String
    /// What to run or change.
    public let fix: String

    public var description: String { "\(path): \(problem); \(fix)" }

    /// The command that (re-)issues the CA, with `--config` when known.
    public static func initCommand(configPath: String?) -> String {
        "pinproxy ca init" + (configPath.map { " --config \($0)" } ?? "")
    }

    static func missing(_ path: String, configPath: String?) -> InterceptionCAError {
        InterceptionCAError(kind: .missing, path: path, problem: "no interception CA here yet",
                            fix: "run `\(initCommand(configPath: configPath))` to create it")
    }

    static func unusable(_ path: String, _ problem: String, configPath: String?) -> InterceptionCAError {
        InterceptionCAError(kind: .unusable, path: path, problem: problem,
                            fix: "run `\(initCommand(configPath: configPath))` to issue a new CA (clients must then trust its new root)")
    }

    static func io(_ path: String, _ problem: String) -> InterceptionCAError {
        InterceptionCAError(kind: .io, path: path, problem: problem, fix: "check the path and its permissions")
    }
}

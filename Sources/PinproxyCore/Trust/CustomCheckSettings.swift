/// What `policy: "custom"` runs and how long its answers count (SPEC §2.1):
/// the command as an argument vector (no shell ever parses it), the time it
/// is given, and how long a verdict is reused.
public struct CustomCheckSettings: Sendable, Hashable {
    /// `command`: an absolute path to an executable, then its arguments.
    public var command: [String]
    /// `timeout` (default 2 s): a command still running then is killed, and the chain rejected.
    public var timeout: Duration
    /// `cache` (default 10 min): how long a verdict answers for the same rule,
    /// host, port and served chain; `.zero` asks the command on every handshake.
    public var cache: Duration

    public static let defaultTimeout = Duration.seconds(2)
    public static let defaultCache = Duration.seconds(600)

    public init(command: [String], timeout: Duration = Self.defaultTimeout, cache: Duration = Self.defaultCache) {
        self.command = command
        self.timeout = timeout
        self.cache = cache
    }

    /// The settings behind one reference (`TrustPolicy.customCheck`), equal and hashed by value.
    final class Box: Sendable, Hashable {
        let settings: CustomCheckSettings
        init(_ settings: CustomCheckSettings) { self.settings = settings }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.settings == rhs.settings }
        func hash(into hasher: inout Hasher) { hasher.combine(settings) }
    }
}

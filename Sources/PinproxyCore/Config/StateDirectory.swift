/// systemd's `StateDirectory=pinproxy` (SPEC §5): where pinproxy keeps what
/// it creates and must find again after a restart (the interception CA, the
/// learned pins). systemd names it in `$STATE_DIRECTORY`, a colon-separated
/// list when several are configured (the first is pinproxy's); without it
/// pinproxy keeps these files in the working directory.
enum StateDirectory {
    /// `name` inside the state directory, else `fallback` (a path relative to the working directory).
    static func path(of name: String, environment: [String: String], fallback: String) -> String {
        guard let first = environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init),
              !first.isEmpty else { return fallback }
        return (first.hasSuffix("/") ? first : first + "/") + name
    }
}

import Foundation

/// Validates the keys of `policy: "custom"` (SPEC §2.1): `command`, an
/// argument vector whose first element is an absolute path to an executable
/// that no one else may rewrite; `timeout`; `cache`.
///
/// The command decides trust, so a command another user can replace is a
/// way around every pin: a file, or a directory holding it, writable by
/// others is refused (`check`, `run` and reload alike), as is a path the
/// daemon would have to look up (no `PATH` search, no shell).
enum CustomCheckSection {
    /// `timeout` is at most this: a handshake waits this long, with a client behind it.
    static let maximumTimeout = Duration.seconds(60)
    /// `cache` is at most a day: a verdict is evidence about a chain at one time.
    static let maximumCache = Duration.seconds(86_400)

    /// Reads `member` (at `memberPath`) into `policy.customCheck`.
    static func apply(_ member: JSONValue.Member, at memberPath: JSONPath, to policy: inout TrustPolicy,
                      into diagnostics: inout ConfigurationDiagnostics) {
        var settings = policy.customCheck ?? CustomCheckSettings(command: [])
        switch member.key {
        case "command":
            guard let command = parseCommand(member.value, at: memberPath, into: &diagnostics) else { return }
            settings.command = command
        case "timeout":
            guard let timeout = duration(member.value, at: memberPath, allowsZero: false, upTo: maximumTimeout,
                                         into: &diagnostics) else { return }
            settings.timeout = timeout
        default:
            guard let cache = duration(member.value, at: memberPath, allowsZero: true, upTo: maximumCache,
                                       into: &diagnostics) else { return }
            settings.cache = cache
        }
        policy.customCheck = settings
    }

    private static func parseCommand(_ value: JSONValue, at path: JSONPath,
                                     into diagnostics: inout ConfigurationDiagnostics) -> [String]? {
        let problemsBefore = diagnostics.problems.count
        guard let elements = diagnostics.strings(value, at: path) else { return nil }
        guard let (program, programPath, programValue) = elements.first else {
            diagnostics.problem(path, value, "\"command\" is empty",
                                hint: "write [\"/usr/local/lib/pinproxy/check-chain\", \"--flag\"]: the program, then its arguments")
            return nil
        }
        for (argument, elementPath, element) in elements where argument.utf8.contains(0) {
            diagnostics.problem(elementPath, element, "\"\(argument)\" holds a NUL character, which no argument can carry")
        }
        guard program.hasPrefix("/") else {
            diagnostics.problem(programPath, programValue, "\"\(program)\" is not an absolute path",
                                hint: "name the program by its absolute path: the command runs without a shell and without a PATH search")
            return nil
        }
        requireTrustedExecutable(program, at: programPath, programValue, into: &diagnostics)
        guard diagnostics.problems.count == problemsBefore else { return nil }
        return elements.map(\.0)
    }

    /// Records a problem unless `file` is a regular file the daemon may
    /// execute, and neither it nor its directory is writable by others.
    static func requireTrustedExecutable(_ file: String, at path: JSONPath, _ value: JSONValue,
                                         into diagnostics: inout ConfigurationDiagnostics) {
        var status = stat()
        guard stat(file, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            diagnostics.problem(path, value, "custom command \"\(file)\" cannot be used: \(reason)",
                                hint: "check the path")
            return
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            diagnostics.problem(path, value, "custom command \"\(file)\" is not a regular file")
            return
        }
        guard access(file, X_OK) == 0 else {
            diagnostics.problem(path, value, "custom command \"\(file)\" is not executable",
                                hint: "chmod 0755 \(file)")
            return
        }
        if status.st_mode & S_IWOTH != 0 {
            diagnostics.problem(path, value, "custom command \"\(file)\" is writable by others, who could replace the trust decision",
                                hint: "chmod o-w \(file)")
            return
        }
        let directory = (file as NSString).deletingLastPathComponent
        var directoryStatus = stat()
        // A directory anyone may write lets anyone swap the file, unless it is
        // sticky (as /tmp is) and the file is not theirs to rename.
        if stat(directory.isEmpty ? "/" : directory, &directoryStatus) == 0,
           directoryStatus.st_mode & S_IWOTH != 0, directoryStatus.st_mode & S_ISVTX == 0 {
            diagnostics.problem(path, value, "the directory of custom command \"\(file)\" is writable by others, who could replace it",
                                hint: "chmod o-w \(directory), or move the command to a directory only its owner writes")
        }
    }

    /// A custom command given as long as the whole handshake never answers:
    /// `timeouts.handshake` ends the handshake first (a 504, not a verdict).
    static func warnAboutTimeouts(rules: [HostRule], defaultPolicy: PolicyTable.DefaultPolicy, handshake: Duration,
                                  into diagnostics: inout ConfigurationDiagnostics) {
        func check(_ policy: TrustPolicy, at path: @autoclosure () -> JSONPath) {
            guard let timeout = policy.customCheck?.timeout, timeout >= handshake else { return }
            diagnostics.warn(path().key("timeout"), "timeout \(DurationSyntax.format(timeout)) is not shorter than timeouts.handshake "
                                + "\(DurationSyntax.format(handshake)): a handshake ends before its command can answer")
        }
        // The path is made only for a warning: with 100,000 rules, making one
        // per rule (and copying every rule into a list) cost 4% of a load.
        for rule in rules { check(rule.policy, at: JSONPath.root.key("hosts").key(rule.key)) }
        if case let .policy(policy) = defaultPolicy { check(policy, at: JSONPath.root.key("default_policy")) }
    }

    /// A duration string (`"2s"`, `"250ms"`, `"10m"`; `"0s"` where zero is allowed) up to `limit`.
    private static func duration(_ value: JSONValue, at path: JSONPath, allowsZero: Bool, upTo limit: Duration,
                                 into diagnostics: inout ConfigurationDiagnostics) -> Duration? {
        guard case .string(let text) = value.kind else {
            diagnostics.problem(path, value, "expected a duration string, found \(value.typeName)",
                                hint: allowsZero ? "write e.g. \"10m\", or \"0s\" to ask every time" : "write e.g. \"2s\"")
            return nil
        }
        if allowsZero, ["0ms", "0s", "0m", "0h"].contains(text) { return .zero }
        guard let duration = DurationSyntax.parse(text) else {
            diagnostics.problem(path, value, "\"\(text)\" is not a positive duration",
                                hint: "write e.g. \"250ms\", \"2s\" or \"10m\"" + (allowsZero ? ", or \"0s\"" : ""))
            return nil
        }
        guard duration <= limit else {
            diagnostics.problem(path, value, "\"\(text)\" is longer than the most allowed, \(DurationSyntax.format(limit))",
                                hint: "a handshake waits for the command, with a client waiting behind it")
            return nil
        }
        return duration
    }
}

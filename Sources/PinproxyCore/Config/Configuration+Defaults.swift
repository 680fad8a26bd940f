extension Configuration {
    /// What pinproxy runs on without a configuration file (SPEC §2): one
    /// forward listener on 127.0.0.1:8080, `default_policy` `default`, the
    /// violation log in systemd's `LOGS_DIRECTORY` when set (else the working
    /// directory), one event loop per core, learned pins in systemd's
    /// `STATE_DIRECTORY` (else the working directory).
    public static func builtInDefaults(environment: [String: String], cpuCount: Int) -> Configuration {
        let logDirectory = environment["LOGS_DIRECTORY"].flatMap { value -> String? in
            // systemd passes a colon-separated list when several directories are configured; use the first.
            let first = value.split(separator: ":").first.map(String.init) ?? ""
            return first.isEmpty ? nil : first
        }
        let logPath = logDirectory.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + "violations.jsonl" }
            ?? "./violations.jsonl"
        let listener = ListenerConfiguration(
            address: Endpoint(host: HostName("127.0.0.1")!, port: 8080), mode: .forward)
        var configuration = Configuration(listeners: [listener], violationLogPath: logPath,
                                          policies: PolicyTable(defaultPolicy: .policy(.standard)),
                                          threads: max(1, cpuCount))
        configuration.learnedPinsPath = StateDirectory.path(of: LearnedPins.fileName, environment: environment,
                                                            fallback: "./" + LearnedPins.fileName)
        return configuration
    }
}

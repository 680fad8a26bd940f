import Foundation

/// Turns a configuration file into a validated `Configuration` (SPEC §2).
///
/// Like relayd's `-n`, every problem in the file is collected and thrown
/// together; nothing is half-applied. Unknown keys are errors because a typo
/// must not silently disable pinning. Values not given in the file take the
/// built-in defaults.
public enum ConfigurationLoader {
    static let topLevelKeys = ["listeners", "violation_log", "trust_store", "default_policy", "hosts",
                               "resolve", "timeouts", "limits", "threads", "log_burst", "upstream_reuse",
                               "interception", "connect_ports", "admin", "access_log"]

    /// Reads and validates the file at `path`. `now` decides which pins count as
    /// about to expire.
    public static func load(path: String, environment: [String: String], cpuCount: Int,
                            now: Date = Date()) throws(ConfigurationError) -> (Configuration, [ConfigurationWarning]) {
        func failure(_ message: String, hint: String? = nil) -> ConfigurationError {
            ConfigurationError(source: path, problems: [ConfigurationProblem(path: "$", line: nil, message: message, hint: hint)])
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        guard let size else {
            throw failure("cannot read configuration file \"\(path)\": it does not exist or is not accessible",
                          hint: "pass --config FILE")
        }
        guard size <= JSON5Reader.maximumInputBytes else {
            throw failure("configuration file \"\(path)\" is \(size) bytes, more than the limit of \(JSON5Reader.maximumInputBytes)")
        }
        // The file's bytes and text are let go of once parsed, before the
        // sections are validated: with 100,000 rules each copy is 15-25 MB.
        func readDocument() throws(ConfigurationError) -> JSONValue {
            let text: String
            do {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw failure("cannot read configuration file \"\(path)\"", hint: "check its permissions")
                }
                guard let decoded = String(data: data, encoding: .utf8) else {
                    throw failure("configuration file \"\(path)\" is not UTF-8 text")
                }
                text = decoded
            }
            return try document(of: text, source: path)
        }
        return try parse(document: readDocument(), source: path, environment: environment, cpuCount: cpuCount, now: now)
    }

    /// Validates a configuration given as text; `source` names it in messages
    /// (a file path, or `<text>`).
    public static func parse(text: String, source: String, environment: [String: String], cpuCount: Int,
                             now: Date = Date()) throws(ConfigurationError) -> (Configuration, [ConfigurationWarning]) {
        try parse(document: document(of: text, source: source), source: source, environment: environment,
                  cpuCount: cpuCount, now: now)
    }

    /// The JSON5 value of `text`, or its syntax error as a configuration problem.
    private static func document(of text: String, source: String) throws(ConfigurationError) -> JSONValue {
        do throws(JSON5SyntaxError) {
            return try JSON5Reader.parse(text)
        } catch {
            throw ConfigurationError(source: source, problems: [ConfigurationProblem(
                path: "$", line: error.line,
                message: "column \(error.column): \(error.message) near \"\(error.snippet)\"",
                hint: "JSON with // or /* */ comments and trailing commas is accepted")])
        }
    }

    private static func parse(document: JSONValue, source: String, environment: [String: String], cpuCount: Int,
                              now: Date) throws(ConfigurationError) -> (Configuration, [ConfigurationWarning]) {
        var diagnostics = ConfigurationDiagnostics(now: now)
        var configuration = Configuration.builtInDefaults(environment: environment, cpuCount: cpuCount)
        guard let members = diagnostics.members(of: document, at: .root, allowed: topLevelKeys) else {
            throw ConfigurationError(source: source, problems: diagnostics.problems)
        }
        var rules: [HostRule] = []
        var adminValue: (JSONValue, JSONPath)?
        var defaultPolicy = PolicyTable.DefaultPolicy.policy(.standard)
        for member in members {
            let path = JSONPath.root.key(member.key)
            let value = member.value
            switch member.key {
            case "listeners":
                configuration.listeners = ListenersSection.parse(value, at: path, into: &diagnostics)
            case "violation_log":
                if let text = diagnostics.string(value, at: path) {
                    if text.isEmpty { diagnostics.problem(path, value, "violation_log is empty", hint: "give a file path") }
                    configuration.violationLogPath = text
                }
            case "trust_store":
                if let text = diagnostics.string(value, at: path) {
                    diagnostics.requireReadableFile(text, at: path, value, what: "trust store", allowDirectory: true)
                    configuration.trustStorePath = text
                }
            case "default_policy":
                defaultPolicy = parseDefaultPolicy(value, at: path, into: &diagnostics) ?? defaultPolicy
            case "hosts":
                rules = HostsSection.parse(value, at: path, into: &diagnostics)
            case "resolve":
                configuration.resolveOverrides = ResolveSection.parse(value, at: path, into: &diagnostics)
            case "timeouts":
                configuration.timeouts = TimeoutsSection.parse(value, at: path, defaults: configuration.timeouts,
                                                               into: &diagnostics)
            case "limits":
                configuration.limits = LimitsSection.parse(value, at: path, defaults: configuration.limits,
                                                           into: &diagnostics)
            case "threads":
                if let threads = diagnostics.integer(value, at: path, in: 0...256) {
                    configuration.threads = threads == 0 ? max(1, cpuCount) : threads
                }
            case "interception":
                configuration.interception = InterceptionSection.parse(value, at: path, environment: environment,
                                                                       into: &diagnostics)
            case "connect_ports":
                configuration.connectPorts = InterceptionSection.parsePorts(value, at: path, into: &diagnostics)
                    ?? configuration.connectPorts
            case "access_log":
                if let text = diagnostics.string(value, at: path) {
                    if text.isEmpty { diagnostics.problem(path, value, "access_log is empty", hint: "give a file path, or leave access_log out") }
                    configuration.accessLogPath = text
                }
            case "admin":
                // Checked against the listeners once they are all read.
                adminValue = (value, path)
            case "upstream_reuse":
                configuration.upstreamReuse = UpstreamReuseSection.parse(value, at: path, defaults: configuration.upstreamReuse,
                                                                         into: &diagnostics)
            default: // "log_burst"
                configuration.logBurst = diagnostics.integer(value, at: path, in: 1...100_000) ?? configuration.logBurst
            }
        }
        if let (value, path) = adminValue {
            configuration.admin = AdminSection.parse(value, at: path, listeners: configuration.listeners, into: &diagnostics)
        }
        guard diagnostics.problems.isEmpty else {
            throw ConfigurationError(source: source, problems: diagnostics.problems)
        }
        CustomCheckSection.warnAboutTimeouts(rules: rules, defaultPolicy: defaultPolicy, handshake: configuration.timeouts.handshake,
                                             into: &diagnostics)
        configuration.policies = PolicyTable(rules: rules, defaultPolicy: defaultPolicy)
        configuration.source = source
        configuration.fileReferences = diagnostics.fileReferences
        return (configuration, diagnostics.warnings)
    }

    /// `"default"`, `"deny"`, or a policy object without `include_subdomains`.
    private static func parseDefaultPolicy(_ value: JSONValue, at path: JSONPath,
                                           into diagnostics: inout ConfigurationDiagnostics) -> PolicyTable.DefaultPolicy? {
        switch value.kind {
        case .string("default"): return .policy(.standard)
        case .string("deny"): return .deny
        case .string(let text):
            // Only spellings that load: "block" as a policy name would be rejected in turn.
            let example = PolicyKind(rawValue: text) != nil ? #"{ "policy": "\#(text)", … }"# : #"{ "policy": "default" }"#
            diagnostics.problem(path, value, "unknown default_policy \"\(text)\"",
                                hint: "use \"default\", \"deny\" (403 for every unlisted host), or a policy object such as \(example)")
            return nil
        case .object:
            return PolicySection.parse(value, at: path, isDefaultPolicy: true, into: &diagnostics).map { .policy($0) }
        default:
            diagnostics.problem(path, value, "expected \"default\", \"deny\" or a policy object, found \(value.typeName)")
            return nil
        }
    }
}

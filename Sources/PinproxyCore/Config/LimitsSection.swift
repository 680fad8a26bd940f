/// Validates `limits` (SPEC §2). The ranges keep a typo from disabling a
/// limit: a header section below 1 KiB breaks real clients, above 1 MiB it
/// is a memory-exhaustion vector.
enum LimitsSection {
    static let maxHeaderBytesRange = 1024...1_048_576
    static let maxConnectionsRange = 1...1_000_000
    static let customChecksRange = 1...1024

    static func parse(_ value: JSONValue, at path: JSONPath, defaults: Limits,
                      into diagnostics: inout ConfigurationDiagnostics) -> Limits {
        var limits = defaults
        let keys = ["max_header_bytes", "max_connections", "custom_checks"]
        guard let members = diagnostics.members(of: value, at: path, allowed: keys) else { return limits }
        for member in members {
            let memberPath = path.key(member.key)
            if member.key == "max_header_bytes" {
                limits.maxHeaderBytes = diagnostics.integer(member.value, at: memberPath, in: maxHeaderBytesRange)
                    ?? limits.maxHeaderBytes
            } else if member.key == "custom_checks" {
                limits.customChecks = diagnostics.integer(member.value, at: memberPath, in: customChecksRange)
                    ?? limits.customChecks
            } else {
                limits.maxConnections = diagnostics.integer(member.value, at: memberPath, in: maxConnectionsRange)
                    ?? limits.maxConnections
            }
        }
        return limits
    }
}

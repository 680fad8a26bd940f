/// Validates `upstream_reuse`: how many idle upstream connections each event
/// loop keeps per host (`idle_per_host`, 0 to 100000; 0 turns pooling off)
/// and whether TLS sessions are resumed (`tls_sessions`).
enum UpstreamReuseSection {
    static let idlePerHostRange = 0...100_000

    static func parse(_ value: JSONValue, at path: JSONPath, defaults: UpstreamReuse,
                      into diagnostics: inout ConfigurationDiagnostics) -> UpstreamReuse {
        var reuse = defaults
        let keys = ["idle_per_host", "tls_sessions"]
        guard let members = diagnostics.members(of: value, at: path, allowed: keys) else { return reuse }
        for member in members {
            let memberPath = path.key(member.key)
            if member.key == "idle_per_host" {
                reuse.idlePerHost = diagnostics.integer(member.value, at: memberPath, in: idlePerHostRange) ?? reuse.idlePerHost
            } else {
                reuse.tlsSessions = diagnostics.bool(member.value, at: memberPath) ?? reuse.tlsSessions
            }
        }
        return reuse
    }
}

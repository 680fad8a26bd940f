/// Validates `resolve` (SPEC §2, like curl `--resolve`): `"host:port"` →
/// `"ip:port"`. The key's port defaults to 443; the target must be an IP
/// literal (a name would need resolving, defeating the override) and takes
/// the key's port when it has none.
enum ResolveSection {
    static func parse(_ value: JSONValue, at path: JSONPath,
                      into diagnostics: inout ConfigurationDiagnostics) -> [Endpoint: Endpoint] {
        guard case .object(let members) = value.kind else {
            diagnostics.problem(path, value, "expected an object of \"host:port\": \"ip:port\", found \(value.typeName)")
            return [:]
        }
        var overrides: [Endpoint: Endpoint] = [:]
        for member in members {
            let entryPath = path.entry(member.key)
            let source: Endpoint?
            switch EndpointSyntax.parse(member.key, defaultPort: 443) {
            case .success(let endpoint): source = endpoint
            case .failure(let failure):
                source = nil
                diagnostics.problem(entryPath, line: member.position.line, failure.message, hint: "write \"host:port\"")
            }
            guard let targetText = diagnostics.string(member.value, at: entryPath) else { continue }
            switch EndpointSyntax.parse(targetText, defaultPort: source?.port ?? 443) {
            case .success(let target) where target.host.isIPAddress:
                guard let source else { continue }
                if overrides[source] != nil {
                    diagnostics.problem(entryPath, line: member.position.line, "\"\(source)\" is overridden twice")
                    continue
                }
                overrides[source] = target
            case .success:
                diagnostics.problem(entryPath, member.value, "resolve target \"\(targetText)\" is not an IP address",
                                    hint: "write \"127.0.0.1:9443\" or \"[::1]:9443\"")
            case .failure(let failure):
                diagnostics.problem(entryPath, member.value, "resolve target " + failure.message)
            }
        }
        return overrides
    }
}

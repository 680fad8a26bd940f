/// Validates `interception` and `connect_ports` (SPEC §3.1).
enum InterceptionSection {
    static let keys = ["ca_dir"]

    /// `{ "ca_dir": "…" }`; `ca_dir` defaults to `$STATE_DIRECTORY/ca` (the
    /// unit's `StateDirectory=pinproxy`), else `./pinproxy-ca`.
    static func parse(_ value: JSONValue, at path: JSONPath, environment: [String: String],
                      into diagnostics: inout ConfigurationDiagnostics) -> Interception? {
        guard let members = diagnostics.members(of: value, at: path, allowed: keys) else { return nil }
        var directory = StateDirectory.path(of: "ca", environment: environment, fallback: "./pinproxy-ca")
        for member in members {
            guard let text = diagnostics.string(member.value, at: path.key(member.key)) else { return nil }
            guard !text.isEmpty else {
                diagnostics.problem(path.key(member.key), member.value, "ca_dir is empty",
                                    hint: "give the directory the CA lives in, e.g. \"/var/lib/pinproxy/ca\"")
                return nil
            }
            directory = text
        }
        return Interception(caDirectory: directory)
    }

    /// `connect_ports`: an array of TCP ports (1–65535), duplicates refused.
    static func parsePorts(_ value: JSONValue, at path: JSONPath,
                           into diagnostics: inout ConfigurationDiagnostics) -> Set<UInt16>? {
        guard case let .array(elements) = value.kind else {
            diagnostics.problem(path, value, "expected an array of port numbers, found \(value.typeName)",
                                hint: "write e.g. [443]")
            return nil
        }
        var ports = Set<UInt16>()
        for (index, element) in elements.enumerated() {
            guard let port = diagnostics.integer(element, at: path.index(index), in: 1...65535) else { continue }
            if !ports.insert(UInt16(port)).inserted {
                diagnostics.problem(path.index(index), element, "port \(port) is listed twice")
            }
        }
        return ports
    }
}

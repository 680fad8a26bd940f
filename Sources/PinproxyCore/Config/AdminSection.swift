/// Validates `admin` (SPEC §6): `{ "listen": "127.0.0.1:9901", "allow_remote": false }`.
///
/// The admin listener serves `/metrics` and `/status`, which name every rule
/// and its traffic: the same loopback-only rule as the proxy listeners
/// applies, and it may not share an address with one of them.
enum AdminSection {
    static let keys = ["listen", "allow_remote"]

    static func parse(_ value: JSONValue, at path: JSONPath, listeners: [ListenerConfiguration],
                      into diagnostics: inout ConfigurationDiagnostics) -> AdminListener? {
        guard let members = diagnostics.members(of: value, at: path, allowed: keys) else { return nil }
        var address: Endpoint?
        var allowRemote = false
        for member in members {
            let memberPath = path.key(member.key)
            if member.key == "allow_remote" {
                allowRemote = diagnostics.bool(member.value, at: memberPath) ?? false
                continue
            }
            guard let text = diagnostics.string(member.value, at: memberPath) else { return nil }
            switch EndpointSyntax.parse(text, defaultPort: nil) {
            case .success(let endpoint) where endpoint.host.isIPAddress || endpoint.host.value == "localhost":
                address = endpoint
            case .success:
                diagnostics.problem(memberPath, member.value, "admin listen address \"\(text)\" must be an IP address or localhost",
                                    hint: "write e.g. \"127.0.0.1:9901\"")
                return nil
            case .failure(let failure):
                diagnostics.problem(memberPath, member.value, failure.message)
                return nil
            }
        }
        guard let address else {
            diagnostics.problem(path, value, "admin has no \"listen\" address", hint: "add \"listen\": \"127.0.0.1:9901\"")
            return nil
        }
        if !allowRemote, !EndpointSyntax.isLoopback(address.host) {
            diagnostics.problem(path.key("listen"), value["listen"] ?? value,
                                "admin listen address \"\(address)\" is not loopback: every rule's traffic would be visible",
                                hint: "listen on 127.0.0.1 or [::1], or add \"allow_remote\": true if you firewall it")
            return nil
        }
        if listeners.contains(where: { $0.address == address && address.port != 0 }) {
            diagnostics.problem(path.key("listen"), value["listen"] ?? value,
                                "admin listen address \"\(address)\" is already a proxy listener",
                                hint: "give the admin listener its own port, e.g. 9901")
            return nil
        }
        return AdminListener(address: address, allowRemote: allowRemote)
    }
}

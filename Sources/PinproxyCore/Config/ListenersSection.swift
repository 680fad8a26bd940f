/// Validates `listeners` (SPEC §2): each `{listen, mode, upstream, allow_remote}`.
///
/// Safety rules: a listener binds an IP literal or `localhost`, never a name
/// that DNS could move; a non-loopback address needs `allow_remote: true` so
/// pinproxy never becomes an open relay by accident; two listeners cannot
/// share an address; `upstream` is required for, and only for, a gateway.
enum ListenersSection {
    static let keys = ["listen", "mode", "upstream", "allow_remote"]

    static func parse(_ value: JSONValue, at path: JSONPath,
                      into diagnostics: inout ConfigurationDiagnostics) -> [ListenerConfiguration] {
        guard case .array(let elements) = value.kind else {
            diagnostics.problem(path, value, "expected an array of listener objects, found \(value.typeName)")
            return []
        }
        if elements.isEmpty {
            diagnostics.problem(path, value, "no listeners: pinproxy would accept nothing",
                                hint: "add { \"listen\": \"127.0.0.1:8080\", \"mode\": \"forward\" }")
        }
        var listeners: [ListenerConfiguration] = []
        var firstByAddress: [Endpoint: JSONPath] = [:]
        for (index, element) in elements.enumerated() {
            let elementPath = path.index(index)
            guard let listener = parseListener(element, at: elementPath, into: &diagnostics) else { continue }
            if let earlier = firstByAddress[listener.address] {
                diagnostics.problem(elementPath.key("listen"), element["listen"] ?? element,
                                    "listen address \"\(listener.address)\" is already used by \(earlier)")
                continue
            }
            firstByAddress[listener.address] = elementPath
            listeners.append(listener)
        }
        return listeners
    }

    private static func parseListener(_ value: JSONValue, at path: JSONPath,
                                      into diagnostics: inout ConfigurationDiagnostics) -> ListenerConfiguration? {
        guard let members = diagnostics.members(of: value, at: path, allowed: keys) else { return nil }
        var address: Endpoint?
        var isGateway = false
        var modeIsValid = true
        var upstream: (JSONValue, Endpoint?)?
        var allowRemote = false
        for member in members {
            let memberPath = path.key(member.key)
            switch member.key {
            case "listen":
                guard let text = diagnostics.string(member.value, at: memberPath) else { continue }
                switch EndpointSyntax.parse(text, defaultPort: nil) {
                case .success(let endpoint) where endpoint.host.isIPAddress || endpoint.host.value == "localhost":
                    address = endpoint
                case .success:
                    diagnostics.problem(memberPath, member.value,
                                        "listen address \"\(text)\" must be an IP address or localhost",
                                        hint: "write e.g. \"127.0.0.1:8080\" or \"[::1]:8080\"")
                case .failure(let failure):
                    diagnostics.problem(memberPath, member.value, failure.message)
                }
            case "mode":
                guard let text = diagnostics.string(member.value, at: memberPath) else { modeIsValid = false; continue }
                switch text {
                case "forward": isGateway = false
                case "gateway": isGateway = true
                default:
                    modeIsValid = false
                    diagnostics.problem(memberPath, member.value, "unknown mode \"\(text)\"",
                                        hint: "use \"forward\" or \"gateway\"")
                }
            case "upstream":
                guard let text = diagnostics.string(member.value, at: memberPath) else { upstream = (member.value, nil); continue }
                switch EndpointSyntax.parse(text, defaultPort: 443) {
                case .success(let endpoint): upstream = (member.value, endpoint)
                case .failure(let failure):
                    upstream = (member.value, nil)
                    diagnostics.problem(memberPath, member.value, "upstream " + failure.message)
                }
            default: // "allow_remote"
                allowRemote = diagnostics.bool(member.value, at: memberPath) ?? false
            }
        }
        if value["listen"] == nil {
            diagnostics.problem(path, value, "listener has no \"listen\" address",
                                hint: "add \"listen\": \"127.0.0.1:8080\"")
        }
        if let address, !allowRemote, !EndpointSyntax.isLoopback(address.host) {
            diagnostics.problem(path.key("listen"), value["listen"] ?? value,
                                "listen address \"\(address)\" is not loopback: pinproxy would be an open relay",
                                hint: "listen on 127.0.0.1 or [::1], or add \"allow_remote\": true if you firewall it")
        }
        guard modeIsValid else { return nil }
        if isGateway {
            guard let upstream else {
                diagnostics.problem(path, value, "gateway listener has no \"upstream\"",
                                    hint: "add \"upstream\": \"api.example.com:443\"")
                return nil
            }
            guard let address, let endpoint = upstream.1 else { return nil }
            return ListenerConfiguration(address: address, mode: .gateway(upstream: endpoint), allowRemote: allowRemote)
        }
        if let upstream {
            diagnostics.problem(path.key("upstream"), upstream.0, "\"upstream\" applies only to a gateway listener",
                                hint: "add \"mode\": \"gateway\", or remove \"upstream\"")
            return nil
        }
        guard let address else { return nil }
        return ListenerConfiguration(address: address, mode: .forward, allowRemote: allowRemote)
    }
}

/// What `report_uri` accepts: `http://host[:port][/path]`. Reports are sent
/// as plain HTTP POSTs by the daemon (a local agent or collector is the usual
/// receiver); `https://` would need a trust policy of its own, so it is refused
/// rather than sent unverified.
enum ReportURISyntax {
    static func isValid(_ text: String) -> Bool {
        guard text.hasPrefix("http://") else { return false }
        let rest = text.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return false }
        var host = Substring(authority)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let after = host[host.index(after: close)...]
            guard after.isEmpty || (after.hasPrefix(":") && UInt16(after.dropFirst()) != nil) else { return false }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            guard UInt16(host[host.index(after: colon)...]) != nil else { return false }
            host = host[..<colon]
        }
        return HostName(String(host)) != nil
    }
}

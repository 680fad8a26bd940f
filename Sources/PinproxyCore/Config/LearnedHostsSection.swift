/// What `pinproxy pins --learned` prints (SPEC §2.1): the learned pins as a
/// JSON5 configuration whose `hosts` section can be pasted in place of the
/// learning rules, making what was trusted on first use permanent.
///
/// Each entry carries the rule's other settings as the configuration has them
/// (only those that differ from the defaults), so pasting it changes nothing
/// but `"pins": "learn"` into the list. The whole text is a configuration
/// `pinproxy check` accepts; everything meant for people is a `//` comment.
public enum LearnedHostsSection {
    /// `document` read from `file`; `rules` are the configuration's `hosts`
    /// rules, whose settings each entry takes over.
    public static func text(_ document: LearnedPinsDocument, file: String, rules: [HostRule]) -> String {
        var lines = ["// Pins learned on first use, from \(commentText(file)).",
                     "// Check them before you make them permanent: paste each entry over its \"pins\": \"learn\" rule."]
        if document.rules.isEmpty { lines.append("// No rule has learned pins yet.") }
        lines += ["{", "  \"hosts\": {"]
        for (key, learned) in document.rules.sorted(by: { $0.key < $1.key }) {
            let rule = rules.first { $0.key == key }
            var origin = "  // learned"
            if let host = learned.host { origin += " from \(commentText(host))" }
            if let time = learned.learnedAt { origin += " at \(RFC3339Timestamp.seconds(time))" }
            if rule?.policy.learnsPins != true { origin += "; no learning rule \(commentText(key)) in the configuration" }
            lines += ["  " + origin, "    \(JSONLineWriter.quoted(key)): {", "      \"policy\": \"pin-public-keys\",", "      \"pins\": ["]
            for (index, pin) in learned.pins.enumerated() {
                let subject = index < learned.subjects.count ? learned.subjects[index] : nil
                let role = index == 0 ? "leaf" : "issuer"
                lines.append("        \(JSONLineWriter.quoted(pin.description)),"
                             + (subject.map { " // \(commentText($0)) (\(role))" } ?? ""))
            }
            lines.append("      ],")
            lines += (rule.map { settings(of: $0.policy) } ?? []).map { "      " + $0 + "," }
            lines.append("    },")
        }
        lines += ["  },", "}"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` safe inside a `//` comment: a line break (JSON5 counts CR, LF,
    /// U+2028 and U+2029) in a certificate subject would end the comment and
    /// let the rest of it read as configuration; every control character becomes a space.
    static func commentText(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control || scalar.value == 0x2028 || scalar.value == 0x2029 ? " " : scalar
        }))
    }

    /// The members of `policy` that differ from a fresh `pin-public-keys`
    /// entry, spelled as the configuration spells them.
    static func settings(of policy: TrustPolicy) -> [String] {
        let defaults = TrustPolicy(kind: .pinPublicKeys)
        func quoted(_ text: String) -> String { JSONLineWriter.quoted(text) }
        func list(_ texts: [String]) -> String { "[" + texts.map(quoted).joined(separator: ", ") + "]" }
        var members: [String] = []
        if policy.validateChain != defaults.validateChain { members.append("\"validate_chain\": \(policy.validateChain)") }
        if policy.validateHost != defaults.validateHost { members.append("\"validate_host\": \(policy.validateHost)") }
        if policy.includeSubdomains != defaults.includeSubdomains {
            members.append("\"include_subdomains\": \(policy.includeSubdomains)")
        }
        if policy.enforce != defaults.enforce { members.append("\"enforce\": \(policy.enforce)") }
        if let expires = policy.expires { members.append("\"expires\": \(quoted(expires.description))") }
        if policy.minTLSVersion != defaults.minTLSVersion { members.append("\"min_tls_version\": \(quoted(policy.minTLSVersion.rawValue))") }
        if policy.requireForwardSecrecy != defaults.requireForwardSecrecy {
            members.append("\"require_forward_secrecy\": \(policy.requireForwardSecrecy)")
        }
        if let credentials = policy.clientCredentials {
            members.append("\"client_certificate\": \(quoted(credentials.certificatePath))")
            members.append("\"client_key\": \(quoted(credentials.keyPath))")
        }
        if let uri = policy.reportURI { members.append("\"report_uri\": \(quoted(uri))") }
        if !policy.crlFiles.isEmpty { members.append("\"crl_files\": \(list(policy.crlFiles))") }
        if policy.ocspStapling != defaults.ocspStapling { members.append("\"ocsp_stapling\": \(quoted(policy.ocspStapling.rawValue))") }
        return members
    }
}

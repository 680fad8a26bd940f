import Foundation

/// Validates one policy object: a `hosts` entry or an object `default_policy`
/// (SPEC §2.1).
///
/// A key that does not apply to the chosen policy is an error, not silently
/// ignored: `pins` on a `default` policy would otherwise look like pinning
/// while doing none. Files named by the policy must exist and be readable now,
/// so a bad path fails `check` rather than the first request.
enum PolicySection {
    static let commonKeys = ["policy", "include_subdomains", "enforce", "expires", "min_tls_version",
                             "require_forward_secrecy", "client_certificate", "client_key", "report_uri",
                             "crl_files", "ocsp_stapling"]

    /// Keys each policy accepts besides the common ones.
    static func specificKeys(of kind: PolicyKind) -> [String] {
        switch kind {
        case .default: ["validate_host"]
        case .pinPublicKeys: ["pins", "public_keys", "validate_chain", "validate_host"]
        case .pinCertificates: ["certificates", "validate_chain", "validate_host"]
        case .anchors: ["anchors", "validate_host"]
        case .disable: []
        case .custom: ["command", "timeout", "cache", "validate_chain", "validate_host"]
        }
    }

    static let allKeys = commonKeys + ["pins", "public_keys", "certificates", "anchors", "validate_chain", "validate_host",
                                       "command", "timeout", "cache"]

    /// `commonKeys + specificKeys(of:)` for each kind, made once rather than for every rule.
    private static let allowedKeys = Dictionary(uniqueKeysWithValues: PolicyKind.allCases.map { ($0, commonKeys + specificKeys(of: $0)) })

    /// The policy, or nil after recording its problems. `isDefaultPolicy` marks
    /// `default_policy`, where `include_subdomains` has no meaning.
    static func parse(_ value: JSONValue, at path: JSONPath, isDefaultPolicy: Bool,
                      into diagnostics: inout ConfigurationDiagnostics) -> TrustPolicy? {
        guard let members = diagnostics.members(of: value, at: path, allowed: allKeys) else { return nil }
        guard let kind = parseKind(value, at: path, into: &diagnostics) else {
            // Still type-check the other keys so one run reports everything.
            var ignored = TrustPolicy(kind: .disable)
            for member in members where member.key != "policy" {
                apply(member, at: path.key(member.key), to: &ignored, into: &diagnostics)
            }
            return nil
        }
        let allowed = allowedKeys[kind] ?? commonKeys + specificKeys(of: kind)
        var policy = TrustPolicy(kind: kind)
        let problemsBefore = diagnostics.problems.count
        for member in members where member.key != "policy" {
            let memberPath = path.key(member.key)
            if isDefaultPolicy && member.key == "include_subdomains" {
                diagnostics.problem(memberPath, line: member.position.line,
                                    "\"include_subdomains\" does not apply to default_policy (it covers every unlisted host)")
                continue
            }
            if member.key == "pins", member.value.stringValue == LearnedPins.keyword {
                guard allowed.contains("pins") else {
                    diagnostics.problem(memberPath, member.value, "\"pins\": \"learn\" does not apply to policy \"\(kind.rawValue)\"",
                                        hint: "pins are learned on first use by policy \"pin-public-keys\" only: "
                                            + "write \"policy\": \"pin-public-keys\", \"pins\": \"learn\"")
                    continue
                }
                if isDefaultPolicy {
                    // Learning is per rule: the first unlisted host would pin every other one.
                    diagnostics.problem(memberPath, member.value, "\"pins\": \"learn\" does not apply to default_policy",
                                        hint: "pins are learned per rule, and default_policy covers every unlisted host: "
                                            + "add the host to \"hosts\" with \"pins\": \"learn\"")
                    continue
                }
            }
            guard allowed.contains(member.key) else {
                let appliesTo = PolicyKind.allCases.filter { specificKeys(of: $0).contains(member.key) }.map(\.rawValue)
                diagnostics.problem(memberPath, line: member.position.line,
                                    "\"\(member.key)\" does not apply to policy \"\(kind.rawValue)\"",
                                    hint: "it applies to " + appliesTo.map { "\"\($0)\"" }.joined(separator: ", ")
                                        + "; remove it or change the policy")
                continue
            }
            apply(member, at: memberPath, to: &policy, into: &diagnostics)
        }
        checkRequirements(policy, value, at: path, into: &diagnostics)
        guard diagnostics.problems.count == problemsBefore else { return nil }
        PolicyWarnings.check(policy, at: path, into: &diagnostics)
        return policy
    }

    private static func parseKind(_ value: JSONValue, at path: JSONPath,
                                  into diagnostics: inout ConfigurationDiagnostics) -> PolicyKind? {
        // Spelled out only for a message: building it for every rule cost more than the rest of this function.
        var valid: String { PolicyKind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ") }
        guard let kindValue = value["policy"] else {
            diagnostics.problem(path, value, "no \"policy\" key", hint: "add \"policy\": one of \(valid)")
            return nil
        }
        guard let text = diagnostics.string(kindValue, at: path.key("policy")) else { return nil }
        guard let kind = PolicyKind(rawValue: text) else {
            diagnostics.problem(path.key("policy"), kindValue, "unknown policy \"\(text)\"", hint: "use one of \(valid)")
            return nil
        }
        return kind
    }

    /// Reads one (applicable) key into `policy`, recording a problem for a bad value.
    private static func apply(_ member: JSONValue.Member, at path: JSONPath, to policy: inout TrustPolicy,
                              into diagnostics: inout ConfigurationDiagnostics) {
        let value = member.value
        switch member.key {
        case "pins" where value.stringValue != nil:
            guard value.stringValue == LearnedPins.keyword else {
                diagnostics.problem(path, value, "expected an array of pins or \"\(LearnedPins.keyword)\", found \"\(value.stringValue ?? "")\"",
                                    hint: "write \"pins\": [\"sha256/…\", \"sha256/…\"], or \"pins\": \"learn\" to trust the host on first use")
                return
            }
            policy.learnsPins = true
        case "pins":
            let pins = (diagnostics.strings(value, at: path) ?? []).compactMap { text, elementPath, element in
                do throws(PinParseError) {
                    return try SPKIPin.parse(text)
                } catch {
                    diagnostics.problem(elementPath, element, error.message,
                                        hint: "print a host's pins with `pinproxy pins HOST`")
                    return nil
                }
            }
            policy.pins = diagnostics.pinLists.intern(pins)
        case "public_keys": policy.publicKeyFiles = files(value, at: path, what: "public key file", into: &diagnostics)
        case "certificates": policy.certificateFiles = files(value, at: path, what: "certificate file", into: &diagnostics)
        case "anchors": policy.anchorFiles = files(value, at: path, what: "anchor file", into: &diagnostics)
        case "crl_files": policy.crlFiles = files(value, at: path, what: "CRL file", into: &diagnostics)
        case "ocsp_stapling":
            guard let text = diagnostics.string(value, at: path) else { return }
            guard let mode = OCSPStaplingMode(rawValue: text) else {
                let modes = OCSPStaplingMode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                diagnostics.problem(path, value, "unknown ocsp_stapling mode \"\(text)\"", hint: "use one of \(modes)")
                return
            }
            policy.ocspStapling = mode
        case "validate_chain": policy.validateChain = diagnostics.bool(value, at: path) ?? true
        case "validate_host": policy.validateHost = diagnostics.bool(value, at: path) ?? true
        case "include_subdomains": policy.includeSubdomains = diagnostics.bool(value, at: path) ?? false
        case "enforce": policy.enforce = diagnostics.bool(value, at: path) ?? true
        case "require_forward_secrecy": policy.requireForwardSecrecy = diagnostics.bool(value, at: path) ?? true
        case "expires":
            guard let text = diagnostics.string(value, at: path) else { return }
            policy.expires = parseDate(text)
            if policy.expires == nil {
                diagnostics.problem(path, value, "\"\(text)\" is not a date", hint: "write YYYY-MM-DD, e.g. \"2027-06-30\"")
            }
        case "min_tls_version":
            guard let text = diagnostics.string(value, at: path) else { return }
            guard let floor = TLSVersionFloor(rawValue: text) else {
                diagnostics.problem(path, value, "unknown TLS version \"\(text)\"", hint: "use \"1.2\" or \"1.3\"")
                return
            }
            policy.minTLSVersion = floor
        case "report_uri":
            guard let text = diagnostics.string(value, at: path) else { return }
            guard ReportURISyntax.isValid(text) else {
                diagnostics.problem(path, value, "\"\(text)\" is not an http:// URL with a host",
                                    hint: "write e.g. \"http://127.0.0.1:9900/pin-reports\" (reports are plain HTTP POSTs)")
                return
            }
            policy.reportURI = text
        case "command", "timeout", "cache":
            CustomCheckSection.apply(member, at: path, to: &policy, into: &diagnostics)
        case "client_certificate", "client_key":
            guard let file = diagnostics.string(value, at: path) else { return }
            diagnostics.requireReadableFile(file, at: path, value,
                                            what: member.key == "client_key" ? "client key file" : "client certificate file")
            var credentials = policy.clientCredentials ?? ClientCredentialFiles(certificatePath: "", keyPath: "")
            if member.key == "client_key" { credentials.keyPath = file } else { credentials.certificatePath = file }
            policy.clientCredentials = credentials
        default:
            break // "policy" is read by parseKind; unknown keys were reported by `members`.
        }
    }

    /// The files named in an array, each checked to be readable.
    private static func files(_ value: JSONValue, at path: JSONPath, what: String,
                              into diagnostics: inout ConfigurationDiagnostics) -> [String] {
        guard let entries = diagnostics.strings(value, at: path) else { return [] }
        for (file, elementPath, element) in entries {
            diagnostics.requireReadableFile(file, at: elementPath, element, what: what)
        }
        return entries.map(\.0)
    }

    /// `YYYY-MM-DD`, a real calendar day.
    static func parseDate(_ text: String) -> PinExpiry? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        return PinExpiry(year: year, month: month, day: day)
    }

    /// What each policy cannot do without (SPEC §2.1), and pairs that go together.
    private static func checkRequirements(_ policy: TrustPolicy, _ value: JSONValue, at path: JSONPath,
                                          into diagnostics: inout ConfigurationDiagnostics) {
        // An element count per list key; a present non-array counts as one (its type error is already reported).
        func count(_ key: String) -> Int {
            guard let list = value[key] else { return 0 }
            if case .array(let elements) = list.kind { return elements.count }
            return 1
        }
        switch policy.kind {
        case .pinPublicKeys where count("pins") + count("public_keys") == 0:
            diagnostics.problem(path, value, "policy \"pin-public-keys\" needs at least one of \"pins\" or \"public_keys\"",
                                hint: "add \"pins\": [\"sha256/…\", \"sha256/…\"] (see `pinproxy pins HOST`)")
        case .pinCertificates where count("certificates") == 0:
            diagnostics.problem(path, value, "policy \"pin-certificates\" needs at least one file in \"certificates\"",
                                hint: "add \"certificates\": [\"/etc/pinproxy/certs/host.pem\"]")
        case .anchors where count("anchors") == 0:
            diagnostics.problem(path, value, "policy \"anchors\" needs at least one file in \"anchors\"",
                                hint: "add \"anchors\": [\"/etc/pinproxy/certs/root.pem\"]")
        case .custom where value["command"] == nil:
            diagnostics.problem(path, value, "policy \"custom\" needs a \"command\"",
                                hint: "add \"command\": [\"/usr/local/lib/pinproxy/check-chain\"] (an argument vector, no shell)")
        default:
            break
        }
        if policy.learnsPins, let keys = value["public_keys"] {
            diagnostics.problem(path.key("public_keys"), keys, "\"public_keys\" cannot be combined with \"pins\": \"learn\"",
                                hint: "learned pins are the whole pin set: remove \"public_keys\", "
                                    + "or list the pins instead of learning them")
        }
        let hasCertificate = value["client_certificate"] != nil, hasKey = value["client_key"] != nil
        if hasCertificate != hasKey {
            let missing = hasCertificate ? "client_key" : "client_certificate"
            diagnostics.problem(path, value, "\"client_certificate\" and \"client_key\" go together; \"\(missing)\" is missing",
                                hint: "add \"\(missing)\", or remove the other")
        }
    }
}

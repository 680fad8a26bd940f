import Foundation

/// The ICANN section of the Public Suffix List (publicsuffix.org), for the
/// rule that a wildcard never covers a public suffix (SPEC §2.3 step 2).
///
/// Only ICANN rules count, as in Chrome (`EXCLUDE_PRIVATE_REGISTRIES`):
/// private registrations such as `s3.amazonaws.com` are served by real
/// wildcard certificates (`*.s3.amazonaws.com`) that every browser accepts.
/// Rules are matched as the list's own algorithm says: exception rules
/// (`!www.ck`) win, then the rule with the most labels, and the implicit
/// rule `*` makes every unlisted top-level domain a public suffix (Chrome's
/// `INCLUDE_UNKNOWN_REGISTRIES`). Unicode rules are stored as A-labels, the
/// form certificates carry. Built once per configuration; immutable.
public struct PublicSuffixList: Sendable {
    private var rules: Set<String> = []
    private var wildcardRules: Set<String> = []
    private var exceptionRules: Set<String> = []

    /// Debian's copy (package `publicsuffix`).
    public static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// Parses the list's text, keeping the rules between the ICANN markers.
    /// Throws when there is no ICANN section: an empty list would let every
    /// wildcard through.
    public init(text: String) throws(PublicSuffixListError) {
        var inICANN = false, sawICANN = false
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("//") {
                if line.contains("===BEGIN ICANN DOMAINS===") { inICANN = true; sawICANN = true }
                if line.contains("===END ICANN DOMAINS===") { inICANN = false }
                continue
            }
            // A rule is the first whitespace-delimited word of a line.
            guard inICANN, let word = line.split(separator: " ").first else { continue }
            if word.hasPrefix("!") {
                if let rule = Self.asciiRule(word.dropFirst()) { exceptionRules.insert(rule) }
            } else if word.hasPrefix("*.") {
                if let rule = Self.asciiRule(word.dropFirst(2)) { wildcardRules.insert(rule) }
            } else if let rule = Self.asciiRule(word[...]) {
                rules.insert(rule)
            }
        }
        guard sawICANN, !rules.isEmpty else { throw PublicSuffixListError(problem: "has no ICANN DOMAINS section") }
    }

    /// Reads the list from `path` (by default Debian's).
    public init(contentsOf path: String = PublicSuffixList.debianPath) throws(PublicSuffixListError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PublicSuffixListError(problem: "cannot read \(path); install Debian's publicsuffix package")
        }
        do {
            try self.init(text: String(decoding: data, as: UTF8.self))
        } catch {
            throw PublicSuffixListError(problem: "\(path) \(error.problem)")
        }
    }

    /// Whether `name` (A-labels, any case, no trailing dot) is itself a public suffix.
    public func isPublicSuffix(_ name: String) -> Bool {
        let labels = name.lowercased().split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !labels.isEmpty, !labels.contains("") else { return false }
        return suffixLabelCount(labels) == labels.count
    }

    /// The number of rightmost labels of `labels` that form its public suffix.
    private func suffixLabelCount(_ labels: [String]) -> Int {
        var longest = 1 // the implicit rule "*"
        for count in 1...labels.count {
            let candidate = labels.suffix(count).joined(separator: ".")
            if exceptionRules.contains(candidate) { return count - 1 }
            if rules.contains(candidate) { longest = max(longest, count) }
            if count < labels.count, wildcardRules.contains(candidate) { longest = max(longest, count + 1) }
        }
        return longest
    }

    /// A rule in lower-case A-labels; nil when a label cannot be encoded.
    private static func asciiRule(_ rule: Substring) -> String? {
        var labels: [String] = []
        for label in rule.lowercased().split(separator: ".", omittingEmptySubsequences: false) {
            if label.allSatisfy(\.isASCII) {
                labels.append(String(label))
            } else {
                guard let encoded = Punycode.encode(String(label)) else { return nil }
                labels.append("xn--" + encoded)
            }
        }
        return labels.joined(separator: ".")
    }
}

/// The public suffix list could not be loaded; names the file and the fix.
public struct PublicSuffixListError: Error, Sendable, CustomStringConvertible {
    public var problem: String
    public var description: String { "public suffix list: \(problem)" }
}

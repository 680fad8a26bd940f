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
        try self.init(bytes: Array(text.utf8))
    }

    /// Parses the list's bytes (UTF-8). Works on bytes, not `String` lines:
    /// the list has some 14,000 lines and is read on every configuration build.
    init(bytes: [UInt8]) throws(PublicSuffixListError) {
        var inICANN = false, sawICANN = false
        let slash = UInt8(ascii: "/"), bang = UInt8(ascii: "!"), star = UInt8(ascii: "*"), dot = UInt8(ascii: ".")
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            // A rule is the first whitespace-delimited word of a line.
            guard let word = line.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }).first else { continue }
            if word.first == slash {
                let comment = String(decoding: line, as: UTF8.self)
                if comment.contains("===BEGIN ICANN DOMAINS===") { inICANN = true; sawICANN = true }
                if comment.contains("===END ICANN DOMAINS===") { inICANN = false }
                continue
            }
            guard inICANN else { continue }
            if word.first == bang {
                if let rule = Self.asciiRule(word.dropFirst()) { exceptionRules.insert(rule) }
            } else if word.first == star, word.dropFirst().first == dot {
                if let rule = Self.asciiRule(word.dropFirst(2)) { wildcardRules.insert(rule) }
            } else if let rule = Self.asciiRule(word) {
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
            try self.init(bytes: [UInt8](data))
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
    private static func asciiRule(_ rule: ArraySlice<UInt8>) -> String? {
        if rule.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: rule.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 },
                          as: UTF8.self)
        }
        var labels: [String] = []
        for label in String(decoding: rule, as: UTF8.self).lowercased().split(separator: ".", omittingEmptySubsequences: false) {
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

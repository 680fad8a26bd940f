import Foundation

/// The pins one rule learned on first use (SPEC §2.1 `"pins": "learn"`, like
/// SSH's `known_hosts`): what the rule's first handshake that passed `default`
/// evaluation verified, recorded once and from then on enforced exactly as a
/// configured `pins` list.
///
/// Which certificates are pinned: the leaf and its issuer, the first two of the
/// chain OpenSSL verified (never the served chain as such, SPEC §2.1).
/// - The issuer (usually an intermediate) survives the leaf's renewal, new key
///   or not, as long as the CA issues from the same intermediate, as most
///   renewals do: TrustKit and RFC 7469 §4.3 advise pinning more than the leaf.
/// - The leaf's key is the backup for the day the CA moves the host to another
///   intermediate while the server keeps its key.
/// - Not the root: every certificate of every intermediate below it would
///   match, which adds little to `default` evaluation, and the trust store
///   already names the roots.
/// A certificate that the same intermediate issues for the host still passes:
/// what learning shuts out is every other CA of the trust store.
public struct LearnedPins: Sendable, Hashable {
    /// The value of `pins` that asks for learning.
    public static let keyword = "learn"
    /// The file's name in the state directory.
    public static let fileName = "learned-pins.json"
    /// What `check` and the daemon say about every learning rule.
    public static let firstUseWarning = "pins \"learn\": trusted on first use: until its pins are learned, "
        + "the first connection is guarded only by default evaluation (the trust store and the host name); "
        + "the leaf's and issuer's keys of the first chain that passes it are then enforced"

    /// At least one, each exactly 32 bytes (by `SPKIPin`'s construction).
    public var pins: [SPKIPin]
    /// The host whose handshake the pins were learned from (a rule may cover several).
    public var host: String?
    public var learnedAt: Date?
    /// The subjects of the certificates `pins` are of, in the same order: for
    /// the people who read the file, never consulted by the check.
    public var subjects: [String]

    public init(pins: [SPKIPin], host: String? = nil, learnedAt: Date? = nil, subjects: [String] = []) {
        self.pins = pins
        self.host = host
        self.learnedAt = learnedAt
        self.subjects = subjects
    }

    /// What a verified chain (leaf first) teaches: its leaf's and its issuer's
    /// keys (the leaf's alone for a chain of one); nil for an empty chain.
    public init?(learningFrom verified: [CertificateFacts], host: String, at time: Date) {
        let learned = Array(verified.prefix(2))
        let pins = learned.compactMap { SPKIPin(digest: $0.spkiSHA256) }
        guard !pins.isEmpty, pins.count == learned.count else { return nil }
        self.init(pins: pins, host: host, learnedAt: time, subjects: learned.map(\.subject))
    }

    /// The pin digests, in order, as a check's material takes them.
    public var digests: [[UInt8]] { pins.map(\.digest) }
}

/// One field line of a header or trailer section (RFC 9110 §5).
///
/// `name` is kept as received (case preserved, so a relayed head looks like the
/// original); `value` has its leading and trailing OWS removed (RFC 9112 §5.1).
/// Bytes that are not UTF-8 (obs-text) are decoded with replacement characters.
public struct HTTPField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Case-insensitive comparison of the field name with an ASCII name
    /// (field names are case-insensitive, RFC 9110 §5.1).
    func hasName(_ other: String) -> Bool {
        HTTPSyntax.equalsIgnoringASCIICase(name, other)
    }
}

extension Array where Element == HTTPField {
    /// The values of every field named `name` (case-insensitive), in order.
    func values(named name: String) -> [String] {
        compactMap { $0.hasName(name) ? $0.value : nil }
    }
}

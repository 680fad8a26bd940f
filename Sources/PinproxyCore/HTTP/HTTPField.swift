/// One field line of a header or trailer section (RFC 9110 §5).
///
/// `name` is kept as received (case preserved, so a relayed head looks like the
/// original); `value` has its leading and trailing OWS removed (RFC 9112 §5.1).
/// Bytes that are not UTF-8 (obs-text) are decoded with replacement characters
/// in this String view; relaying copies the received bytes (`FieldSection`).
public struct HTTPField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

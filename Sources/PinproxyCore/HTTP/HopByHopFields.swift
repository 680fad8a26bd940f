/// Decides which fields of a message stay on one connection and are not
/// forwarded (RFC 9110 §7.6.1, SPEC §3).
///
/// The fixed set plus every field named by a `Connection` option; the
/// framing fields are not in it: the writers regenerate them from the
/// validated `BodyFraming`.
///
/// Asked once per field of every relayed head, so it compares names in place
/// (length first) instead of lower-casing them into a set.
struct HopByHopFields {
    static let alwaysRemoved: [String] = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade", "proxy-authorization",
    ]

    /// The options of the message's `Connection` fields (usually none).
    private let named: [Substring]

    init(_ fields: [HTTPField]) {
        named = FramingFields.connectionOptions(in: fields)
    }

    func contains(_ field: HTTPField) -> Bool {
        Self.alwaysRemoved.contains { field.hasName($0) }
            || named.contains { HTTPSyntax.equalsIgnoringASCIICase(field.name, $0) }
    }
}

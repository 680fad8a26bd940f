/// Decides which fields of a message stay on one connection and are not
/// forwarded (RFC 9110 §7.6.1, SPEC §3).
///
/// The fixed set plus every field named by a `Connection` option; the
/// framing fields are not in it: the writers regenerate them from the
/// validated `BodyFraming`.
///
/// Asked once per field of every relayed head: the fixed set is the field's
/// `KnownFieldName`, the nominated names are compared in place.
struct HopByHopFields {
    /// The options of the message's `Connection` fields (usually none).
    private let named: [Substring]

    init(_ fields: [HTTPField]) {
        named = FramingFields.connectionOptions(in: fields)
    }

    func contains(_ field: HTTPField) -> Bool {
        field.known.isAlwaysHopByHop
            || named.contains { HTTPSyntax.equalsIgnoringASCIICase(field.name, $0) }
    }
}

/// Decides which fields of a message stay on one connection and are not
/// forwarded (RFC 9110 §7.6.1, SPEC §3).
///
/// The fixed set plus every field named by a `Connection` option; the
/// framing fields are not in it: the writers regenerate them from the
/// validated `BodyFraming`.
struct HopByHopFields {
    static let alwaysRemoved: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade", "proxy-authorization",
    ]

    private let named: Set<String>

    init(_ fields: [HTTPField]) {
        named = Set(FramingFields.connectionOptions(in: fields))
    }

    func contains(_ field: HTTPField) -> Bool {
        let name = field.name.lowercased()
        return Self.alwaysRemoved.contains(name) || named.contains(name)
    }
}

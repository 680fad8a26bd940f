/// Decides which fields of a message stay on one connection and are not
/// forwarded (RFC 9110 §7.6.1, SPEC §3).
///
/// The fixed set plus every field named by a `Connection` option. A name the
/// options share with a field pinproxy generates (Host, the framing fields)
/// removes only the received copy: the writers never copy those anyway and
/// write their own from what was parsed, so an option cannot take away what
/// the next hop frames or routes by.
///
/// Asked once per field of every relayed head: the fixed set is the field's
/// `KnownFieldName`, the nominated names are compared in place.
struct HopByHopFields {
    /// The options of the message's `Connection` fields (usually none).
    private let named: [Substring]

    init(_ section: FieldSection) {
        named = FramingFields.connectionOptions(in: section)
    }

    /// Whether the field at `index` of `section` stays on this connection.
    func contains(_ section: FieldSection, at index: Int) -> Bool {
        section.lines[index].known.isAlwaysHopByHop || named.contains { section.hasName(at: index, $0) }
    }

    /// Whether a `Connection` option names `field` (ASCII case-insensitive).
    func nominates(_ field: String) -> Bool {
        named.contains { HTTPSyntax.equalsIgnoringASCIICase($0, field) }
    }
}

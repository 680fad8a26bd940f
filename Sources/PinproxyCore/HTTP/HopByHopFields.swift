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
    /// The options of the message's `Connection` fields that name a field
    /// outside the fixed set, as ranges of the section's storage (usually none).
    private let named: [Range<Int>]

    init(_ section: FieldSection) {
        named = FramingFields.connectionOptions(in: section)
    }

    /// Whether the field at `index` of `section` (the section this was made from) stays on this connection.
    func contains(_ section: FieldSection, at index: Int) -> Bool {
        section.lines[index].known.isAlwaysHopByHop || named.contains { section.hasName(at: index, equalToStorage: $0) }
    }

    /// Whether a `Connection` option of `section` names `field` (ASCII case-insensitive).
    func nominates(_ field: StaticString, in section: FieldSection) -> Bool {
        section.storage.withUnsafeBytes { bytes in
            named.contains { HTTPSyntax.equalsIgnoringASCIICase(bytes: UnsafeRawBufferPointer(rebasing: bytes[$0]), lowercase: field) }
        }
    }
}

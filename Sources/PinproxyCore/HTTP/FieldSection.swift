/// The field lines of a head, kept as the bytes they arrived in: one copy of
/// the section and one array of offsets, however many fields there are.
///
/// A head is parsed, checked and relayed once; making two Strings per field
/// for that (and freeing them) was the largest cost of the keep-alive path
/// (callgrind: about 7,000 instructions per request). Strings are made only
/// for the few fields pinproxy interprets (framing, Connection, Host, Expect),
/// whose values are short enough to be stored inline, and for `fields`, which
/// tests and cold paths use.
///
/// Equality compares the fields (names and values), not how they were spelled
/// on the wire, so a parsed section equals one built from the same fields.
public struct FieldSection: Sendable, Hashable {
    /// One field line: offsets into `storage`; the value is already OWS-trimmed.
    struct Line: Sendable {
        var name: Range<Int>
        var value: Range<Int>
        var known: KnownFieldName
    }

    private(set) var storage: [UInt8]
    private(set) var lines: [Line]

    /// Copies `bytes[range]` (the field lines of a head) and the scanner's
    /// spans, which are offsets into `bytes`.
    init(copying bytes: UnsafeRawBufferPointer, range: Range<Int>, spans: [FieldLineScanner.Span]) {
        storage = Array(UnsafeRawBufferPointer(rebasing: bytes[range]))
        let base = range.lowerBound
        lines = []
        lines.reserveCapacity(spans.count)
        for span in spans {
            let name = (span.name.lowerBound - base)..<(span.name.upperBound - base)
            let known = KnownFieldName(UnsafeRawBufferPointer(rebasing: bytes[span.name]))
            lines.append(Line(name: name, value: (span.value.lowerBound - base)..<(span.value.upperBound - base),
                              known: known))
        }
    }

    /// A section holding `fields` in order.
    public init(_ fields: [HTTPField]) {
        storage = []
        lines = []
        lines.reserveCapacity(fields.count)
        for field in fields {
            let nameStart = storage.count
            storage.append(contentsOf: field.name.utf8)
            let nameEnd = storage.count
            storage.append(contentsOf: field.value.utf8)
            lines.append(Line(name: nameStart..<nameEnd, value: nameEnd..<storage.count,
                              known: KnownFieldName(field.name.utf8)))
        }
    }

    public var count: Int { lines.count }

    /// Every field as Strings (bytes that are not UTF-8 decoded with replacement characters).
    public var fields: [HTTPField] {
        lines.indices.map { HTTPField(name: name(at: $0), value: value(at: $0)) }
    }

    func name(at index: Int) -> String { string(lines[index].name) }

    func value(at index: Int) -> String { string(lines[index].value) }

    /// The values of every field named `name` (ASCII case-insensitive), in order.
    func values(named name: String) -> [String] {
        lines.indices.compactMap { hasName(at: $0, name) ? value(at: $0) : nil }
    }

    /// The values of every field recognised as `known`, in order.
    func values(of known: KnownFieldName) -> [String] {
        lines.indices.compactMap { lines[$0].known == known ? value(at: $0) : nil }
    }

    func hasName(at index: Int, _ name: some StringProtocol) -> Bool {
        storage.withUnsafeBytes { bytes in
            HTTPSyntax.equalsIgnoringASCIICase(bytes: UnsafeRawBufferPointer(rebasing: bytes[lines[index].name]),
                                               name)
        }
    }

    /// Appends the field line at `index` to `writer` as received (name, ": ", value, CRLF).
    func write(at index: Int, to writer: inout HeadWriter) {
        let line = lines[index]
        storage.withUnsafeBytes { bytes in
            writer.field(UnsafeRawBufferPointer(rebasing: bytes[line.name]),
                         UnsafeRawBufferPointer(rebasing: bytes[line.value]))
        }
    }

    private func string(_ range: Range<Int>) -> String {
        storage.withUnsafeBytes { HTTPSyntax.string($0, range) }
    }

    public static func == (lhs: FieldSection, rhs: FieldSection) -> Bool {
        guard lhs.lines.count == rhs.lines.count else { return false }
        for index in lhs.lines.indices {
            let left = lhs.lines[index], right = rhs.lines[index]
            guard lhs.storage[left.name].elementsEqual(rhs.storage[right.name]),
                  lhs.storage[left.value].elementsEqual(rhs.storage[right.value]) else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(lines.count)
        storage.withUnsafeBytes { bytes in
            for line in lines {
                // Lengths first, so that names and values cannot run together.
                hasher.combine(line.name.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes[line.name]))
                hasher.combine(line.value.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes[line.value]))
            }
        }
    }
}

/// The field lines of a head, kept as the bytes they arrived in: one copy of
/// the section and one array of offsets, however many fields there are.
///
/// A head is parsed, checked and relayed once; making two Strings per field
/// for that (and freeing them) was the largest cost of the keep-alive path
/// (callgrind: about 7,000 instructions per request). Content-Length,
/// Connection and Expect are read in place (`withValue`); Strings are made
/// only for Host and Transfer-Encoding, whose values are short enough to be
/// stored inline, and for `fields`, which tests and cold paths use.
///
/// Equality compares the fields (names and values), not how they were spelled
/// on the wire, so a parsed section equals one built from the same fields.
public struct FieldSection: Sendable, Hashable {
    /// One field line: offsets into `storage`; the value is already OWS-trimmed.
    struct Line: Sendable {
        var name: Range<Int>
        var value: Range<Int>
        var known: KnownFieldName
        /// The received line is "name: value" CRLF, as a writer would put it:
        /// relayed by copying it (with its neighbours) in one piece.
        var isVerbatim = false
    }

    private(set) var storage: [UInt8]
    private(set) var lines: [Line]

    /// Copies `bytes[range]` (the field lines of a head) into `storage`
    /// (empty, from `HeadBuffers`) with the scanner's `lines`, whose offsets
    /// count from `range.lowerBound`.
    init(copying bytes: UnsafeRawBufferPointer, range: Range<Int>, lines: consuming [Line], into storage: consuming [UInt8]) {
        self.storage = consume storage
        self.storage.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[range]).assumingMemoryBound(to: UInt8.self))
        self.lines = consume lines
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

    /// Appends every field line `keeps` accepts, in order, each as name, ": ",
    /// value, CRLF; adjacent verbatim lines go in one copy, so an ordinary
    /// head is relayed in a few pieces rather than five appends per field.
    func write(to writer: inout HeadWriter, keeping keeps: (Int) -> Bool) {
        storage.withUnsafeBytes { bytes in
            // The verbatim lines read so far and not yet written: storage[runStart..<runEnd].
            var runStart = 0
            var runEnd = 0
            for index in lines.indices {
                guard keeps(index) else { continue }
                let line = lines[index]
                if line.isVerbatim && line.name.lowerBound == runEnd && runEnd > runStart {
                    runEnd = line.value.upperBound + 2
                    continue
                }
                if runEnd > runStart { writer.verbatim(UnsafeRawBufferPointer(rebasing: bytes[runStart..<runEnd])) }
                if line.isVerbatim {
                    runStart = line.name.lowerBound
                    runEnd = line.value.upperBound + 2
                } else {
                    runStart = 0
                    runEnd = 0
                    writer.field(UnsafeRawBufferPointer(rebasing: bytes[line.name]),
                                 UnsafeRawBufferPointer(rebasing: bytes[line.value]))
                }
            }
            if runEnd > runStart { writer.verbatim(UnsafeRawBufferPointer(rebasing: bytes[runStart..<runEnd])) }
        }
    }

    /// Lends `body` the (trimmed) value bytes of the field line at `index`.
    func withValue<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let range = lines[index].value
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Whether the name of the line at `index` equals `storage[other]`, ASCII case-insensitively.
    func hasName(at index: Int, equalToStorage other: Range<Int>) -> Bool {
        let name = lines[index].name
        guard name.count == other.count else { return false }
        return storage.withUnsafeBytes { bytes in
            for offset in 0..<name.count
            where HTTPSyntax.lowered(bytes[name.lowerBound + offset]) != HTTPSyntax.lowered(bytes[other.lowerBound + offset]) {
                return false
            }
            return true
        }
    }

    /// The index of the first line recognised as `known`, and whether another follows it.
    func firstIndex(of known: KnownFieldName) -> (index: Int, repeated: Bool)? {
        guard let first = lines.firstIndex(where: { $0.known == known }) else { return nil }
        return (first, lines[(first + 1)...].contains { $0.known == known })
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

/// Accumulates the bytes of a serialised head: start line, field lines, the
/// empty line. Used by the writers so every line ends in exactly CRLF.
struct HeadWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    mutating func line(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
    }

    mutating func field(_ name: String, _ value: String) {
        bytes.append(contentsOf: name.utf8)
        bytes.append(HTTPSyntax.colon)
        bytes.append(HTTPSyntax.space)
        line(value)
    }

    /// The empty line that ends the head; returns the finished bytes.
    mutating func finish() -> [UInt8] {
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
        return bytes
    }
}

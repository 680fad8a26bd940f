/// Accumulates the bytes of a serialised head: start line, field lines, the
/// empty line. Used by the writers so every line ends in exactly CRLF.
struct HeadWriter {
    private(set) var bytes: [UInt8] = []

    static let typicalCapacity = 512

    init(capacity: Int = typicalCapacity) { bytes.reserveCapacity(capacity) }

    /// Writes into `buffer` (empty, from `HeadBuffers`), whose capacity is kept.
    init(into buffer: consuming [UInt8]) {
        bytes = consume buffer
        bytes.reserveCapacity(Self.typicalCapacity)
    }

    /// A start line of three space-separated parts, written piece by piece
    /// (string interpolation would build and free a String per message).
    mutating func startLine(_ first: some StringProtocol, _ second: some StringProtocol, _ third: some StringProtocol) {
        append(first)
        bytes.append(HTTPSyntax.space)
        append(second)
        bytes.append(HTTPSyntax.space)
        line(third)
    }

    /// A status line: version, the three-digit code, reason.
    mutating func statusLine(_ version: String, _ status: Int, _ reason: String) {
        append(version)
        bytes.append(HTTPSyntax.space)
        bytes.append(UInt8(ascii: "0") + UInt8(status / 100 % 10))
        bytes.append(UInt8(ascii: "0") + UInt8(status / 10 % 10))
        bytes.append(UInt8(ascii: "0") + UInt8(status % 10))
        bytes.append(HTTPSyntax.space)
        line(reason)
    }

    mutating func line(_ text: some StringProtocol) {
        append(text)
        endLine()
    }

    mutating func field(_ name: String, _ value: some StringProtocol) {
        append(name)
        bytes.append(HTTPSyntax.colon)
        bytes.append(HTTPSyntax.space)
        line(value)
    }

    /// A field whose value is `value` in plain decimal, written digit by digit
    /// (no String per message for the Content-Length of every response).
    mutating func field(_ name: String, decimal value: UInt64) {
        append(name)
        bytes.append(HTTPSyntax.colon)
        bytes.append(HTTPSyntax.space)
        appendDecimal(value)
        endLine()
    }

    /// `Host: <upstream's authority>` (RFC 9110 §7.2): brackets around an IPv6
    /// literal, the port omitted when it is the https default. Written piece
    /// by piece, like the start line: no String per request.
    mutating func hostField(_ upstream: Endpoint) {
        Self.hostFieldName.withUTF8Buffer { bytes.append(contentsOf: $0) }
        let bracketed = upstream.host.isIPv6
        if bracketed { bytes.append(UInt8(ascii: "[")) }
        append(upstream.host.value)
        if bracketed { bytes.append(UInt8(ascii: "]")) }
        if upstream.port != 443 {
            bytes.append(HTTPSyntax.colon)
            appendDecimal(UInt64(upstream.port))
        }
        endLine()
    }

    private static let hostFieldName: StaticString = "Host: "

    @inline(__always)
    private mutating func appendDecimal(_ value: UInt64) {
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// A field line copied from received bytes.
    mutating func field(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: name)
        bytes.append(HTTPSyntax.colon)
        bytes.append(HTTPSyntax.space)
        bytes.append(contentsOf: value)
        endLine()
    }

    /// `Via: 1.1 pinproxy` (RFC 9110 §7.6.3), which every relayed head ends
    /// with: one copy of a constant line rather than four appends.
    mutating func viaPinproxy() {
        Self.viaLine.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private static let viaLine: StaticString = "Via: 1.1 pinproxy\r\n"

    /// Complete field lines copied from received bytes (CRLFs included).
    mutating func verbatim(_ lines: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: lines)
    }

    private mutating func endLine() {
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
    }

    /// Native strings are contiguous UTF-8: one copy, not the generic
    /// element-by-element append of a `UTF8View`.
    private mutating func append(_ text: some StringProtocol) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: text.utf8) }
    }

    /// The empty line that ends the head; returns the finished bytes.
    mutating func finish() -> [UInt8] {
        endLine()
        return bytes
    }
}

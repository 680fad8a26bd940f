/// The list and comparison helpers of `HTTPSyntax` for values still in their
/// received bytes: the framing and `Connection` checks of every head run on
/// these, so none of them makes a String.
extension HTTPSyntax {
    /// The elements of a comma-separated list (RFC 9110 §5.6.1) in `bytes`,
    /// OWS-trimmed, as ranges of `bytes`, handed to `body` one by one (empty
    /// elements included, as `forEachListElement` does); stops when `body`
    /// returns false.
    static func forEachListElement(in bytes: UnsafeRawBufferPointer, _ body: (Range<Int>) -> Bool) {
        var start = 0
        while true {
            var end = start
            while end < bytes.count, bytes[end] != comma { end += 1 }
            var lower = start
            var upper = end
            while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
            while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
            guard body(lower..<upper), end < bytes.count else { return }
            start = end + 1
        }
    }

    /// Whether `bytes` spell `lowercase` (given in lower case), ASCII case-insensitively.
    static func equalsIgnoringASCIICase(bytes: UnsafeRawBufferPointer, lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count where lowered(bytes[index]) != expected[index] { return false }
        return true
    }

    /// `1*DIGIT` as an unsigned 64-bit number; nil on any other byte or overflow.
    static func decimal(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard !bytes.isEmpty else { return nil }
        var result: UInt64 = 0
        for byte in bytes {
            guard isDigit(byte) else { return nil }
            let (times, overflowA) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflowA || overflowB { return nil }
            result = sum
        }
        return result
    }
}

extension HTTPSyntax {
    /// Whether `text` holds `byte`: over the contiguous UTF-8 of a native
    /// string or substring (what the parsers make), since iterating a
    /// `UTF8View` costs some 30 instructions a byte, for every request's target and Host.
    static func contains(_ byte: UInt8, in text: some StringProtocol) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(byte) } ?? text.utf8.contains(byte)
    }
}

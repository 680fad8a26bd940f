/// Byte comparison whose running time does not depend on where (or whether)
/// two equal-length inputs differ.
///
/// Pin digests are not secret, but a comparison that exits at the first
/// differing byte leaks how much of a pin a forged key matched; comparing in
/// constant time costs nothing at 32 bytes and removes the question.
enum ConstantTimeBytes {
    /// True when `a` and `b` are byte-equal. Lengths are compared first (a
    /// length is public: every SHA-256 digest has 32 bytes); equal lengths are
    /// always compared in full.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }

    /// True when some element of `candidates` is byte-equal to some element of
    /// `pins`. Every pair is compared: a match does not end the scan early.
    static func anyEqual(_ candidates: [[UInt8]], _ pins: [[UInt8]]) -> Bool {
        var matched = false
        for candidate in candidates {
            for pin in pins {
                let isEqual = equal(candidate, pin)
                matched = matched || isEqual
            }
        }
        return matched
    }
}

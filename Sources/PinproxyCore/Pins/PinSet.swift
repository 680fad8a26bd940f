/// The pins of one policy, checked against a certificate's digest.
///
/// Matching runs in time independent of which pin (if any) matches: every pin
/// is compared in full and the results are OR-ed, with no early exit, so the
/// timing of a verdict reveals nothing about the configured pins to a server
/// probing them.
public struct PinSet: Sendable, Hashable {
    /// The pins in configuration order (duplicates kept; they are harmless).
    public var pins: [SPKIPin]

    public init(_ pins: [SPKIPin]) { self.pins = pins }

    public var isEmpty: Bool { pins.isEmpty }

    /// Whether `digest` (a SHA-256 of a DER SubjectPublicKeyInfo or certificate)
    /// equals one of the pins. A digest of the wrong length matches nothing,
    /// still after comparing against every pin.
    public func contains(_ digest: [UInt8]) -> Bool {
        var anyMatch: UInt8 = 0
        let lengthMismatch: UInt8 = digest.count == 32 ? 0 : 1
        for pin in pins {
            var difference: UInt8 = lengthMismatch
            for index in 0..<32 {
                difference |= pin.digest[index] ^ (index < digest.count ? digest[index] : 0)
            }
            // 1 when every byte was equal, 0 otherwise, without a branch on the data.
            anyMatch |= UInt8(truncatingIfNeeded: (UInt16(difference) &- 1) >> 8) & 1
        }
        return anyMatch == 1
    }
}

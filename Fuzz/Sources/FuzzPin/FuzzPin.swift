import FuzzSupport
import PinproxyCore

/// libFuzzer harness over `SPKIPin.parse` (SPEC §2.1 pin spellings).
///
/// Invariants: a parsed pin is 32 bytes; its `description` is the canonical
/// `sha256/<base64>` spelling and parses back to the same pin; because the
/// base64 is strict (padding, no spaces), the canonical spelling is exactly
/// the input rewritten to `sha256/` (curl's `sha256//` and HPKP's
/// `pin-sha256="…"` only differ in their wrapper). A refusal quotes the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPin(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = FuzzInput(data, size).text
    do {
        let pin = try SPKIPin.parse(text)
        Invariant.check(pin.digest.count == 32, "pin of \(pin.digest.count) bytes from \(text.debugDescription)")
        let canonical = pin.description
        Invariant.check((try? SPKIPin.parse(canonical)) == pin, "\(canonical) does not parse back")
        let encoded: Substring
        // "sha256//" + 43 characters is the canonical spelling of a digest whose
        // base64 starts with '/' (a 32-byte digest is always 44 characters).
        if text.hasPrefix("sha256//"), text.utf8.count != 7 + 44 {
            encoded = text.dropFirst(8)
        } else if text.hasPrefix("sha256/") {
            encoded = text.dropFirst(7)
        } else {
            Invariant.check(text.hasPrefix("pin-sha256=\"") && text.hasSuffix("\""), "accepted \(text.debugDescription)")
            encoded = text.dropFirst(12).dropLast()
        }
        Invariant.check(canonical == "sha256/" + encoded, "\(text.debugDescription) is not canonical \(canonical)")
    } catch {
        Invariant.check(error.input == text, "error input differs from the input")
        Invariant.check(error.message.contains("\"\(text)\""), "error does not quote the input")
    }
    return 0
}

/// The entry point SwiftPM links as `main` (see `FuzzerDriver`).
@_cdecl("FuzzPin_main")
public func fuzzPinMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzerDriver.run(argc, argv, fuzzPin)
}

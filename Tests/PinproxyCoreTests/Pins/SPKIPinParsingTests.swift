import Testing
@testable import PinproxyCore

@Suite("SPKIPin parsing")
struct SPKIPinParsingTests {
    /// SHA-256 of the empty string, a well-known 32-byte digest.
    static let emptySHA256: [UInt8] = [
        0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
        0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
    ]

    @Test("all three spellings decode to the same 32-byte digest", arguments: [
        "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "pin-sha256=\"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\"",
    ])
    func acceptedSpellings(text: String) throws {
        let pin = try SPKIPin.parse(text)
        #expect(pin.digest == Self.emptySHA256)
        #expect(pin.description == "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
    }

    /// A digest whose base64 begins with '/': its canonical spelling starts
    /// "sha256//" like curl's. Found by an end-to-end test with a random pin.
    @Test("a canonical pin whose base64 starts with a slash is not mistaken for curl's spelling", arguments: [
        "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "sha256///AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ])
    func leadingSlash(text: String) throws {
        let pin = try SPKIPin.parse(text)
        #expect(pin.digest == [0xFC] + [UInt8](repeating: 0, count: 31))
        #expect(pin.description == "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    }

    @Test("malformed pins are refused with a message quoting the input", arguments: [
        ("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
         "pin \"sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\" decodes to 31 bytes; a SHA-256 pin is exactly 32 bytes"),
        ("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
         "pin \"sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\" decodes to 36 bytes; a SHA-256 pin is exactly 32 bytes"),
        ("sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
         "pin \"sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU\" is not valid base64 (standard alphabet, with '=' padding, no spaces)"),
        ("sha256/47DEQpj8HBSa-_TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
         "pin \"sha256/47DEQpj8HBSa-_TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\" is not valid base64 (standard alphabet, with '=' padding, no spaces)"),
        ("sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=",
         "pin \"sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=\" is not valid base64 (standard alphabet, with '=' padding, no spaces)"),
        ("sha256/ 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
         "pin \"sha256/ 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\" is not valid base64 (standard alphabet, with '=' padding, no spaces)"),
        ("sha1/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
         "pin \"sha1/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\" must be written sha256/<base64 of the SHA-256 of the SubjectPublicKeyInfo>"),
        ("pin-sha256=\"", "pin \"pin-sha256=\"\" must be written sha256/<base64 of the SHA-256 of the SubjectPublicKeyInfo>"),
        ("sha256/", "pin \"sha256/\" decodes to 0 bytes; a SHA-256 pin is exactly 32 bytes"),
        // Not ASCII: read Character by Character, where "/\u{301}" is not "/".
        ("sha256/\u{301}47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
         "pin \"sha256/\u{301}47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\" must be written sha256/<base64 of the SHA-256 of the SubjectPublicKeyInfo>"),
        ("sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFé",
         "pin \"sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFé\" is not valid base64 (standard alphabet, with '=' padding, no spaces)"),
    ])
    func refused(text: String, message: String) {
        #expect(throws: PinParseError(input: text, message: message)) { try SPKIPin.parse(text) }
    }

    @Test("strict base64 decodes canonical input and refuses padding in the middle", arguments: [
        ("", [UInt8]?.some([])),
        ("Zg==", [0x66]),
        ("Zm8=", [0x66, 0x6f]),
        ("Zm9v", [0x66, 0x6f, 0x6f]),
        ("Zh==", nil),
        ("Zg==Zm9v", nil),
        ("Z===", nil),
        ("Zg=", nil),
        ("////", [0xFF, 0xFF, 0xFF]),
        ("+/+/", [0xFB, 0xFF, 0xBF]),
        ("Zm9v\u{0}AAA", nil),
        ("Zm9vÿAA=", nil),
    ])
    func strictBase64(text: String, expected: [UInt8]?) {
        #expect(StrictBase64.decode(text) == expected)
    }
}

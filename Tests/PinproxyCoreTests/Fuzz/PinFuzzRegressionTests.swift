import Foundation
import Testing
@testable import PinproxyCore

/// Inputs found by `Fuzz/run.sh` (harness `FuzzPin`), kept as bytes exactly as
/// libFuzzer saved them, with the invariant each one broke.
///
/// Bug (fixed in `SPKIPin+Parsing.swift`): a digest whose base64 starts with
/// `/` (first byte 0xFC–0xFF, one pin in 64) has a canonical spelling that
/// begins `sha256//`, which the parser takes for curl's `sha256//` prefix and
/// strips one character too many. So `SPKIPin.parse(pin.description)` throws
/// (or, for a curl-spelled input, the canonical form does not parse back),
/// and a pin copied from `pinproxy pins` is refused by `pinproxy check`.
@Suite("Fuzz regressions: SPKIPin round trip")
struct PinFuzzRegressionTests {
    /// `crash-5fd81c3f64f5a4fae842a5c62c21da3e6a17aa2d`: curl's spelling of a
    /// digest whose base64 starts with '/'; accepted, but its canonical
    /// `description` does not parse back.
    static let curlSpelledSlashDigest: [UInt8] = Array("sha256///7DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=".utf8)

    @Test("the fuzzer's input is accepted as curl's spelling of a 32-byte digest")
    func crashInputParses() throws {
        let pin = try SPKIPin.parse(String(decoding: Self.curlSpelledSlashDigest, as: UTF8.self))
        #expect(pin.digest.count == 32)
        #expect(pin.description == "sha256//7DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        #expect(pin.digest.first == 0xFF)
    }

    /// `crash-c53e0619…`: 43 characters after "sha256//" cannot be curl's
    /// spelling of a 32-byte digest (44 characters), so it is the canonical
    /// spelling of a digest whose base64 starts with '/'.
    @Test("sha256// followed by 43 characters is read as the canonical spelling")
    func fortyThreeAfterDoubleSlash() throws {
        let text = "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWG3hSuFU="
        let pin = try SPKIPin.parse(text)
        #expect(pin.description == text)
        #expect(pin.digest.first == 0xFF)
    }

    @Test("the canonical spelling of the fuzzer's pin parses back to the same pin")
    func crashInputRoundTrips() throws {
        let pin = try SPKIPin.parse(String(decoding: Self.curlSpelledSlashDigest, as: UTF8.self))
        let reparsed = try SPKIPin.parse(pin.description)
        #expect(reparsed == pin)
    }

    @Test("digests whose base64 starts with '/' round-trip through their canonical spelling",
          arguments: [UInt8(0xFC), 0xFD, 0xFE, 0xFF])
    func slashDigestsRoundTrip(first: UInt8) throws {
        let pin = try #require(SPKIPin(digest: [first] + [UInt8](repeating: 0x5A, count: 31)))
        #expect(pin.description.hasPrefix("sha256//"))
        let reparsed = try SPKIPin.parse(pin.description)
        #expect(reparsed == pin)
    }

    @Test("digests whose base64 does not start with '/' round-trip (control)",
          arguments: [UInt8(0x00), 0x7F, 0xF8, 0xFB])
    func otherDigestsRoundTrip(first: UInt8) throws {
        let pin = try #require(SPKIPin(digest: [first] + [UInt8](repeating: 0x5A, count: 31)))
        #expect(!pin.description.hasPrefix("sha256//"))
        #expect(try SPKIPin.parse(pin.description) == pin)
    }

    @Test("a configuration with the canonical spelling of such a pin validates")
    func configurationAcceptsCanonicalSlashPin() throws {
        let slash = try #require(SPKIPin(digest: [UInt8](repeating: 0xFF, count: 32)))
        let backup = try #require(SPKIPin(digest: [UInt8](repeating: 0x01, count: 32)))
        let text = """
            {"hosts": {"api.example.com": {"policy": "pin-public-keys", "pins": ["\(slash)", "\(backup)"]}}}
            """
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<test>", environment: [:],
                                                               cpuCount: 1)
        #expect(configuration.policies.rules.first?.policy.pins == [slash, backup])
    }
}

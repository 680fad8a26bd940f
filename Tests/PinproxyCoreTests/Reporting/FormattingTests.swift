import Foundation
import Testing
@testable import PinproxyCore

@Suite("RFC 3339 timestamps and PEM")
struct FormattingTests {
    @Test("milliseconds timestamps are UTC, truncated, and right on both sides of 1970",
          arguments: [(0.0, "1970-01-01T00:00:00.000Z"),
                      (1_796_040_000.123, "2026-11-30T12:00:00.123Z"),
                      (1_796_040_000.9999, "2026-11-30T12:00:00.999Z"),
                      (1_709_251_199.5, "2024-02-29T23:59:59.500Z"),
                      (-0.001, "1969-12-31T23:59:59.999Z"),
                      (-2_203_891_200, "1900-03-01T00:00:00.000Z"),
                      (253_402_300_799, "9999-12-31T23:59:59.000Z"),
                      (1e15, "9999-12-31T23:59:59.999Z")])
    func milliseconds(_ seconds: Double, _ expected: String) {
        #expect(RFC3339Timestamp.milliseconds(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("seconds timestamps drop the fraction",
          arguments: [(1_796_040_000.999, "2026-11-30T12:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"),
                      (-1, "1969-12-31T23:59:59Z")])
    func seconds(_ seconds: Double, _ expected: String) {
        #expect(RFC3339Timestamp.seconds(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("PEM wraps base64 at 64 columns with a newline after every line")
    func pemLines() throws {
        let der = [UInt8](0..<100)
        let pem = PEMCertificate.encode(der: der)
        let base64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiYw=="
        let expected = "-----BEGIN CERTIFICATE-----\n" + base64.prefix(64) + "\n" + base64.dropFirst(64).prefix(64) + "\n"
            + base64.dropFirst(128) + "\n-----END CERTIFICATE-----\n"
        #expect(pem == expected)
        #expect(pem.split(separator: "\n").map(\.count) == [27, 64, 64, 8, 25])
    }

    @Test("PEM of an exact multiple of 64 characters has no empty line")
    func pemExactLine() {
        let pem = PEMCertificate.encode(der: [UInt8](repeating: 0, count: 48))
        #expect(pem == "-----BEGIN CERTIFICATE-----\n" + String(repeating: "A", count: 64) + "\n-----END CERTIFICATE-----\n")
    }
}

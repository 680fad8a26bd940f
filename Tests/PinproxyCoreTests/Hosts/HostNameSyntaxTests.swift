import Testing
@testable import PinproxyCore

/// `HostNameSyntax`'s byte-level fast paths (one pass, no copies: they run for
/// every request's host) against the straightforward readings they replaced.
@Suite struct HostNameSyntaxTests {
    /// The previous, split-based reading of a dotted quad.
    static func referenceIsIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(part), number <= 255 else { return false }
            if part.count > 1 && part.first == "0" { return false }
        }
        return true
    }

    /// The previous normalisation, without the fast path.
    static func referenceNormalise(_ raw: String) -> String? {
        var text = raw
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = String(text.dropFirst().dropLast())
            return HostNameSyntax.isIPv6(text) ? text.lowercased() : nil
        }
        if HostNameSyntax.isIPv6(text) { return text.lowercased() }
        if text.hasSuffix(".") { text.removeLast() }
        text = text.lowercased()
        if referenceIsIPv4(text) { return text }
        return HostNameSyntax.isDNSName(text) ? text : nil
    }

    /// Every string of up to `length` pieces drawn from `pieces`.
    static func strings(_ pieces: [String], upTo length: Int) -> [String] {
        var all = [""]
        var layer = [""]
        for _ in 0..<length {
            layer = layer.flatMap { prefix in pieces.map { prefix + $0 } }
            all += layer
        }
        return all
    }

    @Test("dotted quads: the one-pass reading agrees with the split-based one")
    func ipv4Agrees() {
        let octets = ["0", "7", "255", "256", "00", "1000", "a", "", "٣"]
        let quads = (3...5).flatMap { parts in
            (0..<parts).reduce([[String]()]) { partial, _ in partial.flatMap { prefix in octets.map { prefix + [$0] } } }
                .map { $0.joined(separator: ".") }
        }
        let cases = quads + Self.strings(["1", ".", "25"], upTo: 8) + ["1.2.3.4", "01.2.3.4", "1.2.3.04", "255.255.255.255", "256.1.1.1", "1.2.3", "1.2.3.4.", ".1.2.3.4",
               "1..2.3", "1.2.3.4.5", "0.0.0.0", "999.1.1.1", "1.2.3.-4", "1.2.3.+4", "１.2.3.4"]
        var accepted = 0
        for text in cases {
            #expect(HostNameSyntax.isIPv4(text) == Self.referenceIsIPv4(text), "\(text.debugDescription)")
            if Self.referenceIsIPv4(text) { accepted += 1 }
        }
        #expect(accepted > 100)
    }

    @Test("normalisation: the fast path for already-normal hosts changes no answer")
    func normaliseAgrees() {
        let cases = Self.strings(["a", "Z", "1", "255", "-", ".", "_", ":", "[", "]", "é"], upTo: 5)
            + ["api.example.com", "API.Example.COM.", "127.0.0.1", "127.0.0.1.", "[::1]", "::1", "[::ffff:1.2.3.4]",
               "xn--bcher-kva.example", "-a.example", "a-.example", "a..b", String(repeating: "a", count: 64) + ".x",
               String(repeating: "a.", count: 127) + "a", "01.2.3.4", "1.2.3", "example.com.."]
        for text in cases {
            #expect(HostNameSyntax.normalise(text) == Self.referenceNormalise(text), "\(text.debugDescription)")
        }
    }
}

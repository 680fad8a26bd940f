import Testing
@testable import PinproxyCore

/// Equal pin lists of one configuration share their storage, and a
/// configuration read with sharing equals one read without.
@Suite("Pin lists shared by rules")
struct PinListInterningTests {
    static func pin(_ byte: UInt8) -> SPKIPin { SPKIPin(digest: [UInt8](repeating: byte, count: 32))! }

    static func storage(_ pins: [SPKIPin]) -> UnsafeRawPointer? {
        pins.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    static func storage(_ pin: SPKIPin) -> UnsafeRawPointer? {
        pin.digest.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    @Test("an equal list comes back as the first one's storage; a different list keeps its own, sharing equal pins")
    func sharing() {
        var interner = PinListInterner()
        let first = interner.intern([Self.pin(1), Self.pin(2)])
        let again = interner.intern([Self.pin(1), Self.pin(2)])
        let other = interner.intern([Self.pin(3), Self.pin(2)])
        #expect(again == first && Self.storage(again) == Self.storage(first))
        #expect(other == [Self.pin(3), Self.pin(2)])
        #expect(Self.storage(other) != Self.storage(first))
        #expect(Self.storage(other[1]) == Self.storage(first[1]), "the common pin is one digest")
        #expect(interner.intern([Self.pin(2), Self.pin(1)]) == [Self.pin(2), Self.pin(1)], "order is part of a list")
    }

    @Test("rules with the same pins in a file share one pin list and stay equal to what was written")
    func configurationSharesPins() throws {
        let a = "sha256/" + String(repeating: "A", count: 43) + "=", b = "sha256/" + String(repeating: "B", count: 42) + "E="
        let text = """
        { "violation_log": "/tmp/v.jsonl", "hosts": {
            "one.example.com": { "policy": "pin-public-keys", "pins": ["\(a)", "\(b)"] },
            "two.example.com": { "policy": "pin-public-keys", "pins": ["\(a)", "\(b)"], "enforce": false },
            "three.example.com": { "policy": "pin-public-keys", "pins": ["\(b)", "\(a)"] } } }
        """
        let (configuration, _) = try ConfigurationLoader.parse(text: text, source: "<text>", environment: [:], cpuCount: 1)
        let rules = configuration.policies.rules
        let expected = [try SPKIPin.parse(a), try SPKIPin.parse(b)]
        #expect(rules.map(\.policy.pins) == [expected, expected, expected.reversed()])
        #expect(Self.storage(rules[0].policy.pins) == Self.storage(rules[1].policy.pins))
        #expect(Self.storage(rules[2].policy.pins[0]) == Self.storage(rules[0].policy.pins[1]))
    }
}

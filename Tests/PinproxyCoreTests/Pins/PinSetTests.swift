import Testing
@testable import PinproxyCore

@Suite("PinSet")
struct PinSetTests {
    static func digest(_ byte: UInt8, last: UInt8? = nil) -> [UInt8] {
        var bytes = [UInt8](repeating: byte, count: 32)
        if let last { bytes[31] = last }
        return bytes
    }

    static let set = PinSet([SPKIPin(digest: digest(1))!, SPKIPin(digest: digest(2))!])

    @Test("contains exactly the pinned digests", arguments: [
        (digest(1), true),
        (digest(2), true),
        (digest(1, last: 0), false),
        (digest(3), false),
        (Array(digest(1).prefix(31)), false),
        (digest(1) + [1], false),
        ([], false),
    ])
    func membership(candidate: [UInt8], expected: Bool) {
        #expect(Self.set.contains(candidate) == expected)
    }

    @Test("an empty set contains nothing and says it is empty")
    func empty() {
        let set = PinSet([])
        #expect(set.isEmpty)
        #expect(!set.contains(Self.digest(1)))
        #expect(!Self.set.isEmpty)
        #expect(Self.set.pins.count == 2)
    }
}

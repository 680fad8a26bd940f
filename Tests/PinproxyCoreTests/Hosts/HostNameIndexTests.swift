import Testing
@testable import PinproxyCore

/// The open-addressing table behind `PolicyTable`: positions found by name,
/// through growth, with the first position for a name kept.
@Suite("HostNameIndex")
struct HostNameIndexTests {
    /// Names that share long prefixes and suffixes, so that equal hashes of
    /// near-equal names would show.
    static let names: [Substring] = (0..<10_000).map { "h\($0 % 97).org\($0).example" }

    @Test("10,000 names inserted into a table made for none are each found at their position")
    func growsAndFinds() {
        var index = HostNameIndex()
        let names = Self.names
        for (position, name) in names.enumerated() { index.insert(position, key: name, name: { names[$0] }) }
        #expect(index.count == names.count)
        for (position, name) in names.enumerated() {
            #expect(index.find(name, name: { names[$0] }) == position, "\(name)")
        }
    }

    @Test("names that are not in the table are not found, however close", arguments: [
        "h1.org1.exampl", "h1.org1.example.", "1.org1.example", "h1.org10000.example", "", "example", "h1.org1.examplf",
    ])
    func absentNames(name: String) {
        var index = HostNameIndex(expected: Self.names.count)
        let names = Self.names
        for (position, name) in names.enumerated() { index.insert(position, key: name, name: { names[$0] }) }
        #expect(index.find(Substring(name), name: { names[$0] }) == nil)
    }

    @Test("a name given twice keeps its first position")
    func firstPositionWins() {
        let names: [Substring] = ["a.example", "b.example", "a.example"]
        var index = HostNameIndex()
        for (position, name) in names.enumerated() { index.insert(position, key: name, name: { names[$0] }) }
        #expect(index.count == 2)
        #expect(index.find("a.example", name: { names[$0] }) == 0)
        #expect(index.find("b.example", name: { names[$0] }) == 1)
    }

    @Test("a substring of a longer host is found by its own bytes only")
    func substringKeys() {
        let names: [Substring] = ["example.com", "cdn.example.com"]
        var index = HostNameIndex()
        for (position, name) in names.enumerated() { index.insert(position, key: name, name: { names[$0] }) }
        let host = "img.cdn.example.com"[...]
        let suffix = host[host.index(host.startIndex, offsetBy: 4)...]
        #expect(index.find(suffix, name: { names[$0] }) == 1)
        #expect(index.find(suffix.dropFirst(4), name: { names[$0] }) == 0)
        #expect(index.find(host, name: { names[$0] }) == nil)
    }
}

import Foundation
import Testing
import PinproxyCore
@testable import PinproxyRuntime

/// The store every loop learns through (SPEC §2.1): one winner per rule
/// however many threads race, memory at once and the file after, a person's
/// deletion in the file kept, and a reload that re-arms what was deleted.
@Suite("Learned pins: the store shared by the loops")
struct LearnedPinStoreTests {
    static func candidate(_ seed: UInt8) -> LearnedPins {
        LearnedPins(pins: [SPKIPin(digest: [UInt8](repeating: seed, count: 32))!], host: "h\(seed).example.com")
    }

    @Test("sixteen threads learning one rule at once all get the same pins, and that set is the one in the file")
    func oneWinner() throws {
        let directory = try TemporaryDirectory()
        let store = LearnedPinStore(file: LearnedPinFile(path: directory.file("learned-pins.json")), records: true)
        try store.reload()
        let winners = CollectedValues<LearnedPins>()
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            winners.append(store.learn(Self.candidate(UInt8(index + 1)), forRule: "api.example.com"))
        }
        let all = winners.all
        #expect(all.count == 16)
        #expect(Set(all).count == 1)
        store.waitForWrites()
        #expect(try store.file.read().rules == ["api.example.com": try #require(all.first)])
        #expect(store.pins(forRule: "api.example.com") == all.first)
    }

    @Test("a rule deleted from the file while another learns stays deleted there; a reload re-arms it")
    func deletionSurvivesAndReloadRearms() throws {
        let directory = try TemporaryDirectory()
        let store = LearnedPinStore(file: LearnedPinFile(path: directory.file("learned-pins.json")), records: true)
        try store.reload()
        _ = store.learn(Self.candidate(1), forRule: "a.example.com")
        store.waitForWrites()
        // A person deletes a.example.com's entry; b.example.com learns before the SIGHUP.
        try store.file.write(LearnedPinsDocument())
        _ = store.learn(Self.candidate(2), forRule: "b.example.com")
        store.waitForWrites()
        #expect(try store.file.read().rules == ["b.example.com": Self.candidate(2)])
        #expect(store.pins(forRule: "a.example.com") == Self.candidate(1))
        try store.reload()
        #expect(store.pins(forRule: "a.example.com") == nil)
        #expect(store.learn(Self.candidate(3), forRule: "a.example.com") == Self.candidate(3))
    }

    @Test("a file that became unusable is neither overwritten nor read in: memory keeps enforcing, the reload throws")
    func unusableFileKept() throws {
        let directory = try TemporaryDirectory()
        let store = LearnedPinStore(file: LearnedPinFile(path: directory.file("learned-pins.json")), records: true)
        try store.reload()
        _ = store.learn(Self.candidate(1), forRule: "a.example.com")
        store.waitForWrites()
        try "not json".write(toFile: store.file.path, atomically: false, encoding: .utf8)
        _ = store.learn(Self.candidate(2), forRule: "b.example.com")
        store.waitForWrites()
        #expect(contents(of: store.file.path) == "not json")
        #expect(throws: LearnedPinFileError.self) { try store.reload() }
        #expect(store.pins(forRule: "a.example.com") == Self.candidate(1))
        #expect(store.pins(forRule: "b.example.com") == Self.candidate(2))
    }

    @Test("a store that does not record (probe) learns nothing and writes nothing")
    func readOnly() throws {
        let directory = try TemporaryDirectory()
        let store = LearnedPinStore(file: LearnedPinFile(path: directory.file("learned-pins.json")), records: false)
        try store.reload()
        #expect(store.learn(Self.candidate(1), forRule: "a.example.com") == Self.candidate(1))
        store.waitForWrites()
        #expect(store.pins(forRule: "a.example.com") == nil)
        #expect(!FileManager.default.fileExists(atPath: store.file.path))
    }
}
